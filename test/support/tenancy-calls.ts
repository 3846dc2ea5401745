import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from './invoice.builder';
import type { TestApp, TestCompany } from './test-app';

/** What the tenancy e2e specs share: the problem every refusal must be, invoices, and row counts. */

const PROBLEM_JSON = 'application/problem+json; charset=utf-8';

export function expectProblem(response: Response, status: number, code: string): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe(PROBLEM_JSON);
  expect(JSON.parse(response.text)).toMatchObject({
    type: `https://docs.ledgerkey.dev/errors/${code}`,
    status,
    code,
  });
}

/** Invoices and row counts on the spec's app and pool (`ctx()`, started in its beforeAll). */
export function tenancyCalls(ctx: () => { t: TestApp; db: Pool }) {
  async function issueInvoice(
    company: TestCompany,
    body = anInvoice().withLine().build(),
  ): Promise<Response> {
    const { t } = ctx();
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
    expect(response.status).toBe(201);
    return response;
  }

  async function count(sql: string, params: unknown[]): Promise<number> {
    const { db } = ctx();
    const { rows } = await db.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${sql}`, params);
    return rows[0].count;
  }

  return { issueInvoice, count };
}
