import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey, type InvoiceBuilder, type LineInput } from './invoice.builder';
import type { TestApp, TestCompany } from './test-app';

/** What the bad-input e2e specs share: invoices with one thing wrong, and the problems they must get. */

export const CREATE = '/v1/sales/invoices/create';
export const CUSTOMER = { name: 'UAB Pirkėjas', countryCode: 'LT', vatId: 'LT100001234567' };
export const PROBLEM_FIELDS = ['code', 'detail', 'requestId', 'status', 'title', 'type'];

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  errors?: Array<{ field: string; message: string }>;
  [extension: string]: unknown;
}

/** Every error answer: RFC 9457 problem+json with the documented members and a stable code. */
export function expectProblem(response: Response, status: number, code: string): Problem {
  expect({ status: response.status, code: (response.body as { code?: unknown })?.code }).toEqual({
    status,
    code,
  });
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(response.text) as Problem;
  expect(problem).toEqual(
    expect.objectContaining({
      type: expect.stringMatching(/^https?:\/\/\S+$/),
      title: expect.stringMatching(/\S/),
      status: response.status,
      detail: expect.stringMatching(/\S/),
      code,
      requestId: expect.stringMatching(/\S/),
    }),
  );
  expect(response.headers['x-request-id']).toBe(problem.requestId);
  if (code === 'validation_failed') {
    // The contract: every validation_failed names what is wrong.
    expect(problem.errors).toEqual(expect.arrayContaining([expect.anything()]));
    for (const error of problem.errors ?? [])
      expect(error).toEqual({ field: expect.any(String), message: expect.stringMatching(/\S/) });
  }
  return problem;
}

export function expectFieldError(problem: Problem, field: string): void {
  expect(problem.errors).toEqual(expect.any(Array));
  for (const error of problem.errors ?? []) {
    expect(error).toEqual({ field: expect.any(String), message: expect.stringMatching(/\S/) });
  }
  expect(problem.errors?.map((error) => error.field)).toContain(field);
}

/** A valid invoice with one line changed (fields of any type, to send what a typed client cannot). */
export function withLine(fields: Record<string, unknown>): InvoiceBuilder {
  return anInvoice()
    .withOrderId()
    .withLine(fields as Partial<LineInput>);
}

export function withCustomer(fields: Record<string, unknown>): InvoiceBuilder {
  return anInvoice()
    .withOrderId()
    .withLine()
    .with({ customer: { ...CUSTOMER, ...fields } });
}

export function valid(): InvoiceBuilder {
  return anInvoice().withOrderId().withLine();
}

/** The create call and what it stored, on the spec's app and pool (`ctx()`, started in its beforeAll). */
export function badInputCalls(ctx: () => { t: TestApp; db: Pool }) {
  function create(company: TestCompany, body: object | string, key = newKey()) {
    const { t } = ctx();
    const request = t.http.post(CREATE).set(company.auth).set('Idempotency-Key', key);
    if (typeof body === 'string') return request.set('Content-Type', 'application/json').send(body);
    return request.send(body);
  }

  async function storedFor(company: TestCompany): Promise<Record<string, number>> {
    const { db } = ctx();
    const { rows } = await db.query<Record<string, number>>(
      `SELECT (SELECT count(*)::int FROM invoices WHERE company_id = $1) AS invoices,
              (SELECT count(*)::int FROM invoice_lines WHERE company_id = $1) AS "invoiceLines",
              (SELECT count(*)::int FROM journal_entries WHERE company_id = $1) AS "journalEntries",
              (SELECT count(*)::int FROM document_sequences WHERE company_id = $1) AS sequences,
              (SELECT count(*)::int FROM idempotency_records WHERE company_id = $1) AS "idempotencyRecords"`,
      [company.companyId],
    );
    return rows[0];
  }

  async function expectNothingStored(company: TestCompany): Promise<void> {
    expect(await storedFor(company)).toEqual({
      invoices: 0,
      invoiceLines: 0,
      journalEntries: 0,
      sequences: 0,
      idempotencyRecords: 0,
    });
  }

  return { create, storedFor, expectNothingStored };
}
