import type { Pool } from 'pg';
import type { TestApp, TestCompany } from './test-app';

/** What test/e2e/concurrency.e2e-spec.ts reads of its raw answers and of the books. */

export const CREATE = '/v1/sales/invoices/create';

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: {
    id?: string;
    number?: string;
    sequence?: number;
    orderId?: string | null;
    code?: string;
    existingInvoiceId?: string;
    [field: string]: unknown;
  };
}

export interface StoredBooks {
  invoices: Array<{
    id: string;
    orderId: string | null;
    sequence: number;
    number: string;
    grossTotal: number;
  }>;
  lastValue: number | null;
  journalEntriesBySource: Map<string, number>;
  journalEntryCount: number;
  unbalancedEntries: number;
  debitTotal: number;
  creditTotal: number;
}

/** Raw creates and the stored books, on the spec's app and pool (`ctx()`, started in its beforeAll). */
export function concurrencyCalls(ctx: () => { t: TestApp; db: Pool }) {
  /** One attempt, no retry: the concurrency tests look at every raw answer. */
  async function post(company: TestCompany, key: string, body: unknown): Promise<Answer> {
    const { t } = ctx();
    const response = await fetch(`${t.baseUrl}${CREATE}`, {
      method: 'POST',
      headers: { ...company.auth, 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: JSON.parse(text) as Answer['body'],
    };
  }

  async function storedBooks(companyId: string): Promise<StoredBooks> {
    const { db } = ctx();
    const invoices = await db.query<{
      id: string;
      order_id: string | null;
      sequence: string;
      number: string;
      gross_total: string;
    }>(
      `SELECT id, order_id, sequence, number, gross_total FROM invoices WHERE company_id = $1 ORDER BY sequence`,
      [companyId],
    );
    const sequence = await db.query<{ last_value: string }>(
      `SELECT last_value FROM document_sequences WHERE company_id = $1 AND series = 'INV'`,
      [companyId],
    );
    const entries = await db.query<{ source_id: string; entries: number }>(
      `SELECT source_id, count(*)::int AS entries FROM journal_entries
        WHERE company_id = $1 AND source_type = 'invoice' GROUP BY source_id`,
      [companyId],
    );
    const [counts] = (
      await db.query<{ entries: number; unbalanced: number; debit: string; credit: string }>(
        `SELECT (SELECT count(*)::int FROM journal_entries WHERE company_id = $1) AS entries,
                (SELECT count(*)::int FROM (SELECT entry_id FROM journal_lines WHERE company_id = $1
                   GROUP BY entry_id HAVING sum(debit) <> sum(credit)) u) AS unbalanced,
                (SELECT coalesce(sum(debit), 0)::text FROM journal_lines WHERE company_id = $1) AS debit,
                (SELECT coalesce(sum(credit), 0)::text FROM journal_lines WHERE company_id = $1) AS credit`,
        [companyId],
      )
    ).rows;
    return {
      invoices: invoices.rows.map((row) => ({
        id: row.id,
        orderId: row.order_id,
        sequence: Number(row.sequence),
        number: row.number,
        grossTotal: Number(row.gross_total),
      })),
      lastValue: sequence.rows[0] ? Number(sequence.rows[0].last_value) : null,
      journalEntriesBySource: new Map(entries.rows.map((row) => [row.source_id, row.entries])),
      journalEntryCount: counts.entries,
      unbalancedEntries: counts.unbalanced,
      debitTotal: Number(counts.debit),
      creditTotal: Number(counts.credit),
    };
  }

  /** Gapless 1..count, one balanced journal entry per invoice, and the API's trial balance agrees. */
  async function expectConsistentBooks(company: TestCompany, count: number): Promise<StoredBooks> {
    const { t } = ctx();
    const books = await storedBooks(company.companyId);
    const expectedSequences = Array.from({ length: count }, (_, index) => index + 1);
    expect(books.invoices.map((invoice) => invoice.sequence)).toEqual(expectedSequences);
    expect(books.invoices.map((invoice) => invoice.number)).toEqual(
      expectedSequences.map((sequence) => `INV-${String(sequence).padStart(6, '0')}`),
    );
    expect(books.lastValue).toBe(count);
    expect(books.journalEntryCount).toBe(count);
    expect(books.invoices.filter((invoice) => books.journalEntriesBySource.get(invoice.id) !== 1)).toEqual(
      [],
    );
    expect(books.unbalancedEntries).toBe(0);
    const grossTotal = books.invoices.reduce((sum, invoice) => sum + invoice.grossTotal, 0);
    expect(books.debitTotal).toBe(grossTotal);
    expect(books.creditTotal).toBe(grossTotal);

    const trialBalance = await fetch(`${t.baseUrl}/v1/ledger/trial-balance`, { headers: company.auth });
    expect(trialBalance.status).toBe(200);
    const { totals } = (await trialBalance.json()) as {
      totals: Array<{ currency: string; debitTotal: string; creditTotal: string; balanced: boolean }>;
    };
    expect(totals).toEqual([
      { currency: 'EUR', debitTotal: String(grossTotal), creditTotal: String(grossTotal), balanced: true },
    ]);
    return books;
  }

  async function idempotencyRecords(
    companyId: string,
  ): Promise<Map<string, { status: number; body: string }>> {
    const { db } = ctx();
    const { rows } = await db.query<{
      idempotency_key: string;
      response_status: number;
      response_body: string;
    }>(
      `SELECT idempotency_key, response_status, response_body FROM idempotency_records WHERE company_id = $1`,
      [companyId],
    );
    return new Map(
      rows.map((row) => [row.idempotency_key, { status: row.response_status, body: row.response_body }]),
    );
  }

  return { post, storedBooks, expectConsistentBooks, idempotencyRecords };
}

export async function inParallel<T, R>(
  items: T[],
  limit: number,
  run: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await run(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolveDelay) => setTimeout(resolveDelay, 20));
  }
}

export function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}
