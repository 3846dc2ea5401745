import type { Pool } from 'pg';
import { immutabilityCalls, immutable } from '../support/immutability-sql';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

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

  const { issueInvoice, storedPosting, inTransaction, commitFailure, insertJournalEntry } = immutabilityCalls(
    () => ({ t, db }),
  );

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
});
