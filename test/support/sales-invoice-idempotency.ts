import type { Pool } from 'pg';
import type { TestApp, TestCompany } from './test-app';

/** What the idempotency e2e specs share: the sales-invoice create call and what it stored. */

export const CREATE = '/v1/sales/invoices/create';
export const OPERATION = 'sales.invoices.create';
export const REUSED_DETAIL = 'Idempotency-Key was already used with a different request payload.';
export const IN_USE_DETAIL = 'A request with this Idempotency-Key is still being processed, retry shortly.';
export const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
export const DAY_MS = 86_400_000;

/** The default builder line: 2 × 50.00 at 21 % → net 10000, VAT 2100, gross 12100. */
export const DEFAULT_GROSS = 12_100;

export interface StoredRecord {
  idempotency_key: string;
  operation: string;
  fingerprint: Buffer;
  response_status: number;
  response_headers: Record<string, string>;
  response_body: string;
  created_at: Date;
  expires_at: Date;
}

export interface CompanyBooks {
  invoices: number;
  journalEntries: number;
  /** document_sequences.last_value of series INV; null when no number was ever taken */
  sequence: number | null;
  records: StoredRecord[];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function post(app: TestApp, company: TestCompany, key: string | undefined, body: object | string) {
  const request = app.http.post(CREATE).set(company.auth);
  if (key !== undefined) request.set('Idempotency-Key', key);
  if (typeof body === 'string') return request.set('Content-Type', 'application/json').send(body);
  return request.send(body);
}

/** What a company's invoices stored, on the spec file's pool (`ctx()`, opened in its beforeAll). */
export function invoiceBooks(ctx: () => { db: Pool }) {
  async function booksOf(company: TestCompany): Promise<CompanyBooks> {
    const { db } = ctx();
    const id = company.companyId;
    const [invoices, journal, sequence, records] = await Promise.all([
      db.query<{ n: number }>('SELECT count(*)::int AS n FROM invoices WHERE company_id = $1', [id]),
      db.query<{ n: number }>('SELECT count(*)::int AS n FROM journal_entries WHERE company_id = $1', [id]),
      db.query<{ last_value: string }>(
        `SELECT last_value FROM document_sequences WHERE company_id = $1 AND series = 'INV'`,
        [id],
      ),
      db.query<StoredRecord>(
        `SELECT idempotency_key, operation, fingerprint, response_status, response_headers, response_body,
                created_at, expires_at
           FROM idempotency_records WHERE company_id = $1 ORDER BY created_at, idempotency_key`,
        [id],
      ),
    ]);
    return {
      invoices: invoices.rows[0].n,
      journalEntries: journal.rows[0].n,
      sequence: sequence.rows[0] ? Number(sequence.rows[0].last_value) : null,
      records: records.rows,
    };
  }

  async function expectNothingStored(company: TestCompany): Promise<void> {
    expect(await booksOf(company)).toEqual({ invoices: 0, journalEntries: 0, sequence: null, records: [] });
  }

  async function recordOf(company: TestCompany, key: string): Promise<StoredRecord | undefined> {
    return (await booksOf(company)).records.find((record) => record.idempotency_key === key);
  }

  return { booksOf, expectNothingStored, recordOf };
}

/** The create call on the describe block's app (`ctx()`, started in its beforeAll). */
export function invoiceCalls(ctx: () => { t: TestApp }) {
  function create(company: TestCompany, key: string | undefined, body: object | string) {
    const { t } = ctx();
    return post(t, company, key, body);
  }

  async function trialBalanceTotals(company: TestCompany): Promise<unknown> {
    const { t } = ctx();
    const response = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
    expect(response.status).toBe(200);
    return (response.body as { totals: unknown }).totals;
  }

  return { create, trialBalanceTotals };
}
