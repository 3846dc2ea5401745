import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from './invoice.builder';
import type { TestApp, TestCompany } from './test-app';

/** What the settlement e2e specs share: the create call, its problems, invoices to settle and what it stored. */
export const CREATE = '/v1/settlements/create';
export const OPERATION = 'settlements.create';
export const REUSED_DETAIL = 'Idempotency-Key was already used with a different request payload.';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The default invoice builder line: 2 × 50.00 at 21 % → gross 12100. */
export const DEFAULT_GROSS = 12_100;

export interface InvoiceBody {
  id: string;
  number: string;
  currency: string;
  grossTotal: number;
  creditedTotal: number;
  paidTotal: number;
}

export interface SettlementBody {
  id: string;
  object: string;
  payoutId: string;
  currency: string;
  paidAt: string;
  feeAmount: number;
  allocatedTotal: number;
  netAmount: number;
  allocations: Array<{ invoiceId: string; invoiceNumber: string; amount: number }>;
  createdAt: string;
}

export interface JournalEntryBody {
  sourceType: string;
  sourceId: string;
  memo: string;
  postedAt: string;
  entryDate: string;
  currency: string;
  lines: Array<{ account: string; debit: number; credit: number }>;
}

/** What a company's settlement activity left in the database. */
export interface SettlementBooks {
  settlements: Array<{ id: string; payout_id: string; fee_amount: number; allocated_total: number }>;
  allocations: Array<{ settlement_id: string; invoice_id: string; amount: number }>;
  settlementEntries: string[];
  unbalancedEntries: number;
  paidTotals: Record<string, number>;
  records: Array<{ idempotency_key: string; response_status: number; response_body: string }>;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function byInvoiceId<T extends { invoiceId: string }>(allocations: T[]): T[] {
  return [...allocations].sort((a, b) => (a.invoiceId < b.invoiceId ? -1 : 1));
}

export function post(app: TestApp, company: TestCompany, key: string | undefined, body: object) {
  const request = app.http.post(CREATE).set(company.auth);
  if (key !== undefined) request.set('Idempotency-Key', key);
  return request.send(body);
}

export async function issueInvoice(
  app: TestApp,
  company: TestCompany,
  body: Record<string, unknown> = anInvoice().withLine().build(),
): Promise<InvoiceBody> {
  const response = await app.http
    .post('/v1/sales/invoices/create')
    .set(company.auth)
    .set('Idempotency-Key', newKey('invoice'))
    .send(body);
  expect(response.status).toBe(201);
  return response.body as InvoiceBody;
}

export async function invoiceOf(app: TestApp, company: TestCompany, invoiceId: string): Promise<InvoiceBody> {
  const response = await app.http.get(`/v1/sales/invoices/${invoiceId}`).set(company.auth);
  expect(response.status).toBe(200);
  return response.body as InvoiceBody;
}

export async function trialBalanceTotals(app: TestApp, company: TestCompany): Promise<unknown> {
  const response = await app.http.get('/v1/ledger/trial-balance').set(company.auth);
  expect(response.status).toBe(200);
  return (response.body as { totals: unknown }).totals;
}

/** Reads of what a company's settlements stored, on the spec file's pool (`db()`, opened in its beforeAll). */
export function settlementBooks(db: () => Pool) {
  async function booksOf(company: TestCompany): Promise<SettlementBooks> {
    const id = company.companyId;
    const [settlements, allocations, entries, unbalanced, invoices, records] = await Promise.all([
      db().query<SettlementBooks['settlements'][number]>(
        `SELECT id, payout_id, fee_amount::int, allocated_total::int FROM settlements
          WHERE company_id = $1 ORDER BY created_at, id`,
        [id],
      ),
      db().query<SettlementBooks['allocations'][number]>(
        `SELECT settlement_id, invoice_id, amount::int FROM settlement_allocations
          WHERE company_id = $1 ORDER BY settlement_id, invoice_id`,
        [id],
      ),
      db().query<{ source_id: string }>(
        `SELECT source_id FROM journal_entries WHERE company_id = $1 AND source_type = 'settlement' ORDER BY seq`,
        [id],
      ),
      db().query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT entry_id FROM journal_lines WHERE company_id = $1
            GROUP BY entry_id HAVING sum(debit) <> sum(credit)) u`,
        [id],
      ),
      db().query<{ id: string; paid_total: number }>(
        `SELECT id, paid_total::int FROM invoices WHERE company_id = $1`,
        [id],
      ),
      db().query<SettlementBooks['records'][number]>(
        `SELECT idempotency_key, response_status, response_body FROM idempotency_records
          WHERE company_id = $1 AND operation = $2 ORDER BY created_at, idempotency_key`,
        [id, OPERATION],
      ),
    ]);
    return {
      settlements: settlements.rows,
      allocations: allocations.rows,
      settlementEntries: entries.rows.map((row) => row.source_id),
      unbalancedEntries: unbalanced.rows[0].n,
      paidTotals: Object.fromEntries(invoices.rows.map((row) => [row.id, row.paid_total])),
      records: records.rows,
    };
  }

  /** No settlement, allocation, posting, paid amount or key record: as if the request never came. */
  async function expectNoSettlementEffects(company: TestCompany, records: number = 0): Promise<void> {
    const books = await booksOf(company);
    expect(books.settlements).toEqual([]);
    expect(books.allocations).toEqual([]);
    expect(books.settlementEntries).toEqual([]);
    expect(Object.values(books.paidTotals).every((paid) => paid === 0)).toBe(true);
    expect(books.records).toHaveLength(records);
  }

  return { booksOf, expectNoSettlementEffects };
}

/** The create call on the describe block's app (`app()`, started in its beforeAll), and its outcomes. */
export function settlementCalls(app: () => TestApp) {
  function create(company: TestCompany, key: string | undefined, body: object) {
    return post(app(), company, key, body);
  }

  async function settle(company: TestCompany, body: object): Promise<Response & { body: SettlementBody }> {
    const response = await create(company, newKey(), body);
    expect(response.status).toBe(201);
    return response;
  }

  async function settlementEntries(company: TestCompany): Promise<JournalEntryBody[]> {
    const response = await app().http.get('/v1/ledger/entries?limit=100').set(company.auth);
    expect(response.status).toBe(200);
    return (response.body as { data: JournalEntryBody[] }).data.filter(
      (entry) => entry.sourceType === 'settlement',
    );
  }

  return { create, settle, settlementEntries };
}
