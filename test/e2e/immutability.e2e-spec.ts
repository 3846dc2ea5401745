import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { SQL_SELLER } from '../support/sql-fixtures';
import { testDatabasePool } from '../support/test-database';

interface IssuedInvoice {
  id: string;
  number: string;
  grossTotal: number;
  netTotal: number;
  vatTotal: number;
}

/**
 * Acceptance: "an UPDATE of an invoice amount through SQL fails". The database itself (not
 * only the code) keeps issued documents and journal postings immutable and balanced.
 */
describe('immutability enforced by the database', () => {
  let t: TestApp;
  let db: Pool;

  beforeAll(async () => {
    t = await startTestApp();
    db = testDatabasePool();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  async function issueInvoice(company: TestCompany, body = anInvoice().withOrderId().withLine().build()) {
    const response = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
    expect(response.status).toBe(201);
    return { invoice: response.body as IssuedInvoice, text: response.text };
  }

  async function storedInvoice(id: string): Promise<string> {
    const { rows } = await db.query<{ row: string }>(
      `SELECT row_to_json(i)::text AS row FROM invoices i WHERE id = $1`,
      [id],
    );
    expect(rows).toHaveLength(1);
    return rows[0].row;
  }

  async function storedLines(invoiceId: string): Promise<string> {
    const { rows } = await db.query<{ lines: string }>(
      `SELECT json_agg(l ORDER BY position)::text AS lines FROM invoice_lines l WHERE invoice_id = $1`,
      [invoiceId],
    );
    return rows[0].lines;
  }

  async function storedPosting(invoiceId: string): Promise<{ entryId: string; snapshot: string }> {
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

  const immutable = (table: string) => ({ code: '23000', message: `${table} rows are immutable` });

  describe('invoices', () => {
    it.each([
      [
        'net_total and gross_total (kept consistent)',
        'net_total = net_total + 100, gross_total = gross_total + 100',
      ],
      [
        'vat_total and gross_total (kept consistent)',
        'vat_total = vat_total + 1, gross_total = gross_total + 1',
      ],
      ['customer', `customer = jsonb_set(customer, '{name}', '"Someone Else UAB"')`],
      ['number', `number = 'INV-999999'`],
      ['issue_date', `issue_date = issue_date - 1`],
      ['currency', `currency = 'USD'`],
      ['order_id', `order_id = 'another-order'`],
      ['notes', `notes = 'added later'`],
      ['seller (the profile snapshot)', `seller = jsonb_set(seller, '{vatId}', '"LT999999999999"')`],
    ])('UPDATE of %s is rejected by the trigger and changes nothing', async (_field, assignment) => {
      const company = await t.newCompany();
      const { invoice, text } = await issueInvoice(company);
      const before = await storedInvoice(invoice.id);

      await expect(
        db.query(`UPDATE invoices SET ${assignment} WHERE id = $1`, [invoice.id]),
      ).rejects.toMatchObject({
        code: '23000',
        message: `issued invoice ${invoice.id} is immutable; correct it with a credit note`,
      });

      expect(await storedInvoice(invoice.id)).toBe(before);
      const fetched = await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth);
      expect(fetched.text).toBe(text);
    });

    it('DELETE is rejected by the trigger and the invoice stays', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(company);
      const before = await storedInvoice(invoice.id);

      await expect(db.query(`DELETE FROM invoices WHERE id = $1`, [invoice.id])).rejects.toMatchObject({
        code: '23000',
        message: `issued invoice ${invoice.id} cannot be deleted`,
      });

      expect(await storedInvoice(invoice.id)).toBe(before);
    });

    it('running totals (credited_total, paid_total) may change within their CHECKs, never beyond', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(
        company,
        anInvoice().withLine({ quantity: '1', unitPrice: 10000 }).build(),
      );
      expect(invoice.grossTotal).toBe(12100);
      const documentFields = async () =>
        (
          await db.query<{ row: string }>(
            `SELECT (to_jsonb(i) - 'credited_total' - 'paid_total')::text AS row FROM invoices i WHERE id = $1`,
            [invoice.id],
          )
        ).rows[0].row;
      const before = await documentFields();

      await db.query(`UPDATE invoices SET credited_total = 2100 WHERE id = $1`, [invoice.id]);
      await db.query(`UPDATE invoices SET paid_total = gross_total - credited_total WHERE id = $1`, [
        invoice.id,
      ]);

      const fetched = await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth);
      expect(fetched.body).toMatchObject({ creditedTotal: 2100, paidTotal: 10000, grossTotal: 12100 });

      await expect(
        db.query(`UPDATE invoices SET credited_total = gross_total + 1, paid_total = 0 WHERE id = $1`, [
          invoice.id,
        ]),
      ).rejects.toMatchObject({
        code: '23514',
        constraint: expect.stringMatching(/^ck_invoices_(credited|paid)$/),
      });
      await expect(
        db.query(`UPDATE invoices SET credited_total = -1 WHERE id = $1`, [invoice.id]),
      ).rejects.toMatchObject({
        code: '23514',
        constraint: 'ck_invoices_credited',
      });
      // Paid and credited are bounded separately (a paid invoice may still be credited: refund).
      await db.query(`UPDATE invoices SET paid_total = gross_total WHERE id = $1`, [invoice.id]);
      await expect(
        db.query(`UPDATE invoices SET paid_total = gross_total + 1 WHERE id = $1`, [invoice.id]),
      ).rejects.toMatchObject({
        code: '23514',
        constraint: 'ck_invoices_paid',
      });

      const { rows } = await db.query(
        `SELECT credited_total::int, paid_total::int FROM invoices WHERE id = $1`,
        [invoice.id],
      );
      expect(rows).toEqual([{ credited_total: 2100, paid_total: 12100 }]);
      expect(await documentFields()).toBe(before);
    });

    it('a duplicate (company, series, sequence) is rejected by uq_invoices_company_series_sequence', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(company);
      expect(invoice.number).toBe('INV-000001');

      await expect(
        insertInvoiceRow(db, company.companyId, { sequence: 1, orderId: null }),
      ).rejects.toMatchObject({
        code: '23505',
        constraint: 'uq_invoices_company_series_sequence',
      });
      await expect(
        inTransaction(async (client) => {
          await insertInvoiceRow(client, company.companyId, { sequence: 2, orderId: null });
          throw new Error('valid row inserted; rolling back');
        }),
      ).rejects.toThrow('valid row inserted; rolling back');

      const { rows } = await db.query(`SELECT number FROM invoices WHERE company_id = $1`, [
        company.companyId,
      ]);
      expect(rows).toEqual([{ number: 'INV-000001' }]);
    });

    it('two invoices for one order_id in one company are rejected by uq_invoices_company_order', async () => {
      const company = await t.newCompany();
      const orderId = `order-${randomUUID()}`;
      await issueInvoice(company, anInvoice().withOrderId(orderId).withLine().build());

      await expect(insertInvoiceRow(db, company.companyId, { sequence: 2, orderId })).rejects.toMatchObject({
        code: '23505',
        constraint: 'uq_invoices_company_order',
      });

      const { rows } = await db.query(
        `SELECT count(*)::int AS count FROM invoices WHERE company_id = $1 AND order_id = $2`,
        [company.companyId, orderId],
      );
      expect(rows).toEqual([{ count: 1 }]);
      const otherCompany = await t.newCompany();
      const { invoice: other } = await issueInvoice(
        otherCompany,
        anInvoice().withOrderId(orderId).withLine().build(),
      );
      expect(other.number).toBe('INV-000001');
    });
  });

  describe('invoice lines', () => {
    it.each([
      ['net_amount', 'net_amount = net_amount + 1'],
      ['quantity', 'quantity = quantity * 2'],
      ['unit_price', 'unit_price = 1'],
      ['description', `description = 'Something else'`],
    ])('UPDATE of %s is rejected and changes nothing', async (_field, assignment) => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(company);
      const before = await storedLines(invoice.id);

      await expect(
        db.query(`UPDATE invoice_lines SET ${assignment} WHERE invoice_id = $1`, [invoice.id]),
      ).rejects.toMatchObject(immutable('invoice_lines'));

      expect(await storedLines(invoice.id)).toBe(before);
    });

    it('DELETE is rejected and the lines stay', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(
        company,
        anInvoice().withLine().withLine({ unitPrice: 1 }).build(),
      );
      const before = await storedLines(invoice.id);
      expect(JSON.parse(before)).toHaveLength(2);

      await expect(
        db.query(`DELETE FROM invoice_lines WHERE invoice_id = $1`, [invoice.id]),
      ).rejects.toMatchObject(immutable('invoice_lines'));

      expect(await storedLines(invoice.id)).toBe(before);
    });
  });

  describe('journal entries and lines', () => {
    it.each([
      [
        'UPDATE journal_entries memo',
        `UPDATE journal_entries SET memo = 'rewritten' WHERE id = $1`,
        'journal_entries',
      ],
      [
        'UPDATE journal_entries posted_at',
        `UPDATE journal_entries SET posted_at = posted_at - interval '1 day' WHERE id = $1`,
        'journal_entries',
      ],
      [
        'UPDATE journal_entries entry_date',
        `UPDATE journal_entries SET entry_date = entry_date + 31 WHERE id = $1`,
        'journal_entries',
      ],
      ['DELETE journal_entries', `DELETE FROM journal_entries WHERE id = $1`, 'journal_entries'],
      [
        'UPDATE journal_lines debit',
        `UPDATE journal_lines SET debit = debit + 1 WHERE entry_id = $1 AND debit > 0`,
        'journal_lines',
      ],
      [
        'UPDATE journal_lines amounts (kept balanced)',
        `UPDATE journal_lines SET debit = CASE WHEN debit > 0 THEN debit + 1 ELSE 0 END,
                                  credit = CASE WHEN account = 'revenue' THEN credit + 1 ELSE credit END
          WHERE entry_id = $1`,
        'journal_lines',
      ],
      [
        'UPDATE journal_lines account',
        `UPDATE journal_lines SET account = 'cash' WHERE entry_id = $1`,
        'journal_lines',
      ],
      ['DELETE journal_lines', `DELETE FROM journal_lines WHERE entry_id = $1`, 'journal_lines'],
    ])('%s is rejected and the posting is unchanged', async (_name, statement, table) => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(company);
      const { entryId, snapshot } = await storedPosting(invoice.id);
      const trialBalance = (await t.http.get('/v1/ledger/trial-balance').set(company.auth)).text;

      await expect(db.query(statement, [entryId])).rejects.toMatchObject(immutable(table));

      expect((await storedPosting(invoice.id)).snapshot).toBe(snapshot);
      expect((await t.http.get('/v1/ledger/trial-balance').set(company.auth)).text).toBe(trialBalance);
    });

    it('a balanced entry written through SQL commits (control for the cases below)', async () => {
      const company = await t.newCompany();
      let entryId = '';

      await inTransaction(async (client) => {
        entryId = await insertJournalEntry(client, company.companyId, [
          { account: 'accounts_receivable', debit: 100, credit: 0 },
          { account: 'revenue', debit: 0, credit: 100 },
        ]);
      });

      const entries = await t.http.get('/v1/ledger/entries').set(company.auth);
      expect(entries.body.data.map((entry: { id: string }) => entry.id)).toEqual([entryId]);
      expect(entries.body.data[0].lines).toEqual([
        { account: 'accounts_receivable', debit: 100, credit: 0 },
        { account: 'revenue', debit: 0, credit: 100 },
      ]);
    });

    it('an unbalanced new entry (debit 100, credit 90) fails at COMMIT and nothing persists', async () => {
      const company = await t.newCompany();
      let entryId = '';

      const error = await commitFailure(async (client) => {
        entryId = await insertJournalEntry(client, company.companyId, [
          { account: 'accounts_receivable', debit: 100, credit: 0 },
          { account: 'revenue', debit: 0, credit: 90 },
        ]);
      });

      expect(error).toMatchObject({
        code: '23514',
        message: `journal entry ${entryId} is unbalanced or incomplete (2 of 2 lines, debit 100, credit 90)`,
      });
      const { rows } = await db.query(
        `SELECT (SELECT count(*)::int FROM journal_entries WHERE company_id = $1) AS entries,
                (SELECT count(*)::int FROM journal_lines WHERE company_id = $1) AS lines`,
        [company.companyId],
      );
      expect(rows).toEqual([{ entries: 0, lines: 0 }]);
      const trialBalance = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
      expect(trialBalance.body).toEqual({ object: 'trial_balance', data: [], totals: [] });
    });

    it('an entry without lines fails at COMMIT', async () => {
      const company = await t.newCompany();
      let entryId = '';

      const error = await commitFailure(async (client) => {
        entryId = await insertJournalEntry(client, company.companyId, [], 2);
      });

      expect(error).toMatchObject({
        code: '23514',
        message: `journal entry ${entryId} is unbalanced or incomplete (0 of 2 lines, debit 0, credit 0)`,
      });
      const { rows } = await db.query(`SELECT count(*)::int AS count FROM journal_entries WHERE id = $1`, [
        entryId,
      ]);
      expect(rows).toEqual([{ count: 0 }]);
    });

    it('a line added to a committed entry that unbalances it fails at COMMIT and the entry is unchanged', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(company);
      const { entryId, snapshot } = await storedPosting(invoice.id);

      const error = await commitFailure(async (client) => {
        await client.query(
          `INSERT INTO journal_lines (entry_id, company_id, line_no, account, debit, credit)
           VALUES ($1, $2, 4, 'revenue', 0, 1)`,
          [entryId, company.companyId],
        );
      });

      expect(error).toMatchObject({
        code: '23514',
        message: `journal entry ${entryId} is unbalanced or incomplete (4 of 3 lines, debit ${invoice.grossTotal}, credit ${invoice.grossTotal + 1})`,
      });
      expect((await storedPosting(invoice.id)).snapshot).toBe(snapshot);
    });

    it('even a balanced pair of lines added to a committed entry fails at COMMIT', async () => {
      const company = await t.newCompany();
      const { invoice } = await issueInvoice(company);
      const { entryId, snapshot } = await storedPosting(invoice.id);

      const error = await commitFailure(async (client) => {
        await client.query(
          `INSERT INTO journal_lines (entry_id, company_id, line_no, account, debit, credit)
           VALUES ($1, $2, 4, 'revenue', 0, 500), ($1, $2, 5, 'accounts_receivable', 500, 0)`,
          [entryId, company.companyId],
        );
      });

      expect(error).toMatchObject({
        code: '23514',
        message: `journal entry ${entryId} is unbalanced or incomplete (5 of 3 lines, debit ${invoice.grossTotal + 500}, credit ${invoice.grossTotal + 500})`,
      });
      expect((await storedPosting(invoice.id)).snapshot).toBe(snapshot);
    });

    it.each(['invoices', 'invoice_lines', 'journal_entries', 'journal_lines', 'payment_refunds'])(
      'TRUNCATE %s is rejected',
      async (table) => {
        const client = await db.connect();
        try {
          await client.query('BEGIN');
          // lock_timeout: never wait behind other suites' transactions; the trigger fires first anyway.
          await client.query(`SET LOCAL lock_timeout = '2s'`);
          await expect(client.query(`TRUNCATE ${table} CASCADE`)).rejects.toMatchObject({
            code: '23000',
            message: `${table} cannot be truncated: issued documents are permanent`,
          });
        } finally {
          await client.query('ROLLBACK').catch(() => undefined);
          client.release();
        }
      },
    );
  });

  describe('HTTP', () => {
    it.each([
      { name: 'PUT', method: 'put' },
      { name: 'PATCH', method: 'patch' },
      { name: 'DELETE', method: 'delete' },
    ] as const)(
      '$name /v1/sales/invoices/{id} has no route (404 not_found) and the invoice is unchanged',
      async ({ method }) => {
        const company = await t.newCompany();
        const { invoice, text } = await issueInvoice(company);
        const before = await storedInvoice(invoice.id);

        const response = await t.http[method](`/v1/sales/invoices/${invoice.id}`)
          .set(company.auth)
          .send({ netTotal: 1, grossTotal: 1, customer: { name: 'Someone Else UAB', countryCode: 'LT' } });

        expect(response.status).toBe(404);
        expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(JSON.parse(response.text)).toMatchObject({ status: 404, code: 'not_found' });
        expect(await storedInvoice(invoice.id)).toBe(before);
        expect((await t.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth)).text).toBe(text);
      },
    );
  });
});
