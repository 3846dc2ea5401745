import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { newKey } from './invoice.builder';
import type { TestApp, TestCompany } from './test-app';

/** What the purchase-invoice e2e specs share: the create call, its problems and what it stored. */
export const CREATE = '/v1/purchases/invoices/create';
export const OPERATION = 'purchases.invoices.create';
export const REUSED_DETAIL = 'Idempotency-Key was already used with a different request payload.';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface PurchaseInvoiceBody {
  id: string;
  documentNumber: string;
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
  createdAt: string;
}

export interface StoredRecord {
  idempotency_key: string;
  operation: string;
  response_status: number;
  response_body: string;
}

export interface PurchaseBooks {
  purchaseInvoices: number;
  purchaseInvoiceLines: number;
  journalEntries: number;
  records: StoredRecord[];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function problemOf(response: Response, status: number, code: string): Record<string, unknown> {
  const body = JSON.parse(response.text) as Record<string, unknown>;
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  return body;
}

export function post(app: TestApp, company: TestCompany, key: string, body: object) {
  return app.http.post(CREATE).set(company.auth).set('Idempotency-Key', key).send(body);
}

/** Reads of what a company's purchase invoices stored, on the spec file's pool (`db()`, opened in its beforeAll). */
export function purchaseBooks(db: () => Pool) {
  async function booksOf(company: TestCompany): Promise<PurchaseBooks> {
    const id = company.companyId;
    const [invoices, lines, journal, records] = await Promise.all([
      db().query<{ n: number }>('SELECT count(*)::int AS n FROM purchase_invoices WHERE company_id = $1', [
        id,
      ]),
      db().query<{ n: number }>(
        'SELECT count(*)::int AS n FROM purchase_invoice_lines WHERE company_id = $1',
        [id],
      ),
      db().query<{ n: number }>('SELECT count(*)::int AS n FROM journal_entries WHERE company_id = $1', [id]),
      db().query<StoredRecord>(
        `SELECT idempotency_key, operation, response_status, response_body
           FROM idempotency_records WHERE company_id = $1 ORDER BY created_at, idempotency_key`,
        [id],
      ),
    ]);
    return {
      purchaseInvoices: invoices.rows[0].n,
      purchaseInvoiceLines: lines.rows[0].n,
      journalEntries: journal.rows[0].n,
      records: records.rows,
    };
  }

  async function expectNothingStored(company: TestCompany): Promise<void> {
    expect(await booksOf(company)).toEqual({
      purchaseInvoices: 0,
      purchaseInvoiceLines: 0,
      journalEntries: 0,
      records: [],
    });
  }

  async function purchaseInvoiceIds(company: TestCompany): Promise<string[]> {
    const { rows } = await db().query<{ id: string }>(
      'SELECT id FROM purchase_invoices WHERE company_id = $1 ORDER BY created_at, id',
      [company.companyId],
    );
    return rows.map((row) => row.id);
  }

  return { booksOf, expectNothingStored, purchaseInvoiceIds };
}

/** The create call on the describe block's app (`app()`, started in its beforeAll), and its outcomes. */
export function purchaseInvoiceCalls(app: () => TestApp) {
  function create(company: TestCompany, body: object, key: string = newKey()) {
    return post(app(), company, key, body);
  }

  async function record(
    company: TestCompany,
    body: object,
  ): Promise<Response & { body: PurchaseInvoiceBody }> {
    const response = await create(company, body);
    expect(response.status).toBe(201);
    return response;
  }

  async function expectDuplicateOf(response: Response, existingId: string): Promise<void> {
    const problem = problemOf(response, 409, 'purchase_invoice_duplicate');
    expect(problem.existingPurchaseInvoiceId).toBe(existingId);
  }

  return { create, record, expectDuplicateOf };
}
