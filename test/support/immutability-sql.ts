import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { anInvoice, newKey } from './invoice.builder';
import { SQL_SELLER } from './sql-fixtures';
import type { TestApp, TestCompany } from './test-app';

/** What the immutability e2e specs share: issued invoices, their stored rows, and SQL that bypasses the application. */

export interface IssuedInvoice {
  id: string;
  number: string;
  grossTotal: number;
  netTotal: number;
  vatTotal: number;
}

/** The error of a trigger refusing to change a row of `table`. */
export const immutable = (table: string) => ({ code: '23000', message: `${table} rows are immutable` });

/** Issuing, reading back and writing through SQL, on the spec's app and pool (`ctx()`, started in its beforeAll). */
export function immutabilityCalls(ctx: () => { t: TestApp; db: Pool }) {
  async function issueInvoice(company: TestCompany, body = anInvoice().withOrderId().withLine().build()) {
    const { t } = ctx();
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
    expect(response.status).toBe(201);
    return { invoice: response.body as IssuedInvoice, text: response.text };
  }

  async function storedInvoice(id: string): Promise<string> {
    const { db } = ctx();
    const { rows } = await db.query<{ row: string }>(
      `SELECT row_to_json(i)::text AS row FROM invoices i WHERE id = $1`,
      [id],
    );
    expect(rows).toHaveLength(1);
    return rows[0].row;
  }

  async function storedLines(invoiceId: string): Promise<string> {
    const { db } = ctx();
    const { rows } = await db.query<{ lines: string }>(
      `SELECT json_agg(l ORDER BY position)::text AS lines FROM invoice_lines l WHERE invoice_id = $1`,
      [invoiceId],
    );
    return rows[0].lines;
  }

  async function storedPosting(invoiceId: string): Promise<{ entryId: string; snapshot: string }> {
    const { db } = ctx();
    const { rows } = await db.query<{ id: string; snapshot: string }>(
      `SELECT e.id, json_build_object('entry', row_to_json(e),
                'lines', (SELECT json_agg(l ORDER BY line_no) FROM journal_lines l WHERE l.entry_id = e.id))::text AS snapshot
         FROM journal_entries e WHERE e.source_type = 'invoice' AND e.source_id = $1`,
      [invoiceId],
    );
    expect(rows).toHaveLength(1);
    return { entryId: rows[0].id, snapshot: rows[0].snapshot };
  }

  async function inTransaction(work: (client: PoolClient) => Promise<void>): Promise<void> {
    const { db } = ctx();
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await work(client);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    } finally {
      client.release();
    }
  }

  /** Runs statements in a transaction whose COMMIT is expected to fail; returns that error. */
  async function commitFailure(work: (client: PoolClient) => Promise<void>): Promise<unknown> {
    const { db } = ctx();
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await work(client);
      return await client.query('COMMIT').then(
        () => new Error('COMMIT succeeded'),
        (error: unknown) => error,
      );
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
    }
  }

  async function insertJournalEntry(
    client: PoolClient,
    companyId: string,
    lines: Array<{ account: string; debit: number; credit: number }>,
    declaredLineCount = lines.length,
  ): Promise<string> {
    const id = randomUUID();
    await client.query(
      `INSERT INTO journal_entries (id, company_id, currency, source_type, source_id, memo, posted_at,
                                    entry_date, line_count)
       VALUES ($1, $2, 'EUR', 'manual', $3, 'written by a test through SQL', now(), current_date, $4)`,
      [id, companyId, randomUUID(), declaredLineCount],
    );
    for (const [index, line] of lines.entries()) {
      await client.query(
        `INSERT INTO journal_lines (entry_id, company_id, line_no, account, debit, credit) VALUES ($1, $2, $3, $4, $5, $6)`,
        [id, companyId, index + 1, line.account, line.debit, line.credit],
      );
    }
    return id;
  }

  function insertInvoiceRow(
    client: Pool | PoolClient,
    companyId: string,
    fields: { sequence: number; orderId: string | null },
  ): Promise<unknown> {
    return client.query(
      `INSERT INTO invoices (id, company_id, series, sequence, number, order_id, currency, issue_date, customer,
                             vat_breakdown, net_total, vat_total, gross_total, created_at, seller)
       VALUES ($1, $2, 'INV', $3, $4, $5, 'EUR', current_date,
               '{"name": "SQL Customer", "countryCode": "LT"}', '[]', 0, 0, 0, now(), $6)`,
      [
        randomUUID(),
        companyId,
        fields.sequence,
        `INV-${String(fields.sequence).padStart(6, '0')}`,
        fields.orderId,
        SQL_SELLER,
      ],
    );
  }

  return {
    issueInvoice,
    storedInvoice,
    storedLines,
    storedPosting,
    inTransaction,
    commitFailure,
    insertJournalEntry,
    insertInvoiceRow,
  };
}
