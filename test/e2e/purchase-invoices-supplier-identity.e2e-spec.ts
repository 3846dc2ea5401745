import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import { CREATE, purchaseBooks, purchaseInvoiceCalls, sleep } from '../support/purchase-invoice-calls';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { booksOf, purchaseInvoiceIds } = purchaseBooks(() => db);

describe('purchase invoices', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create, record, expectDuplicateOf } = purchaseInvoiceCalls(() => t);

  describe('supplier identity: a VAT id on one side only', () => {
    const DOCUMENT = 'TK-2026/0042';
    const WITH_VAT = { name: 'UAB Tiekejas', vatId: 'LT100009999999', countryCode: 'LT' };
    const WITHOUT_VAT = { name: 'UAB Tiekejas', countryCode: 'LT' };

    function upload(supplier: Record<string, unknown>, documentNumber = DOCUMENT) {
      return aPurchaseInvoice()
        .withDocumentNumber(documentNumber)
        .withSupplier(supplier)
        .withLine({ quantity: '1', unitPrice: 10000, vatRate: '21' })
        .build();
    }

    /** Journal lines of the company per account: what the books say happened. */
    async function ledgerOf(company: TestCompany) {
      const { rows } = await db.query(
        `SELECT l.account, count(*)::int AS lines, sum(l.debit)::int AS debit, sum(l.credit)::int AS credit
           FROM journal_lines l WHERE l.company_id = $1 GROUP BY l.account ORDER BY l.account`,
        [company.companyId],
      );
      return rows;
    }

    const BOOKED_ONCE = [
      { account: 'accounts_payable', lines: 1, debit: 0, credit: 12100 },
      { account: 'expense', lines: 1, debit: 10000, credit: 0 },
      { account: 'vat_receivable', lines: 1, debit: 2100, credit: 0 },
    ];

    it.each([
      { name: 'the issue: with the VAT id, then without it', first: WITH_VAT, second: WITHOUT_VAT },
      { name: 'without the VAT id, then with it', first: WITHOUT_VAT, second: WITH_VAT },
      {
        name: 'with the VAT id, then without it and the name spelled differently',
        first: WITH_VAT,
        second: { name: 'uab  TIEKEJAS,', countryCode: 'LT' },
      },
    ])(
      '$name → 409 purchase_invoice_duplicate; expense and VAT receivable booked once',
      async ({ first, second }) => {
        const company = await t.newCompany();
        const original = await record(company, upload(first));
        const key = newKey();

        const again = await create(company, upload(second, ' tk-2026/0042 '), key);

        await expectDuplicateOf(again, original.body.id);
        const replay = await create(company, upload(second, ' tk-2026/0042 '), key);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.text).toBe(again.text);
        expect(await purchaseInvoiceIds(company)).toEqual([original.body.id]);
        expect(await ledgerOf(company)).toEqual(BOOKED_ONCE);
        const books = await booksOf(company);
        expect(books).toMatchObject({ purchaseInvoices: 1, purchaseInvoiceLines: 1, journalEntries: 1 });
        expect(books.records.map((row) => row.response_status).sort()).toEqual([201, 409]);
      },
    );

    it('the same name and number under two different VAT ids are two suppliers → two bookings', async () => {
      const company = await t.newCompany();
      const first = await record(company, upload(WITH_VAT));
      const second = await record(company, upload({ ...WITH_VAT, vatId: 'LT100001111111' }));

      expect(second.body.id).not.toBe(first.body.id);
      expect(await purchaseInvoiceIds(company)).toHaveLength(2);
      expect(await ledgerOf(company)).toEqual(
        BOOKED_ONCE.map((row) => ({
          ...row,
          lines: 2,
          debit: row.debit * 2,
          credit: row.credit * 2,
        })),
      );
      const { rows } = await db.query(
        `SELECT supplier_key, supplier_vat_id, supplier_name_key, document_key FROM purchase_invoices
          WHERE company_id = $1 ORDER BY supplier_key`,
        [company.companyId],
      );
      expect(rows).toEqual([
        {
          supplier_key: 'vat:LT100001111111',
          supplier_vat_id: 'LT100001111111',
          supplier_name_key: 'uab tiekejas',
          document_key: DOCUMENT,
        },
        {
          supplier_key: 'vat:LT100009999999',
          supplier_vat_id: 'LT100009999999',
          supplier_name_key: 'uab tiekejas',
          document_key: DOCUMENT,
        },
      ]);
      // Without a VAT id the name matches both: a duplicate (of the first recorded).
      await expectDuplicateOf(await create(company, upload(WITHOUT_VAT)), first.body.id);
    });

    it('the same name without VAT ids but another document number is another document', async () => {
      const company = await t.newCompany();
      await record(company, upload(WITH_VAT));
      await record(company, upload(WITHOUT_VAT, 'TK-2026/0043'));
      expect(await purchaseInvoiceIds(company)).toHaveLength(2);
    });

    /** Sessions waiting for a (company, document number) lock, running a statement like `pattern`. */
    async function waitingForDocumentLock(pattern = '%claim_supplier_document%'): Promise<number> {
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'
            AND query LIKE $1`,
        [pattern],
      );
      return rows[0].n;
    }

    async function until(condition: () => Promise<boolean>): Promise<void> {
      const deadline = Date.now() + 10_000;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error('timed out waiting for the requests to queue');
        await sleep(20);
      }
    }

    function send(
      company: TestCompany,
      body: object,
    ): Promise<{ status: number; body: Record<string, unknown> }> {
      return fetch(`${t.baseUrl}${CREATE}`, {
        method: 'POST',
        headers: { ...company.auth, 'Content-Type': 'application/json', 'Idempotency-Key': newKey() },
        body: JSON.stringify(body),
      }).then(async (response) => ({
        status: response.status,
        body: (await response.json()) as Record<string, unknown>,
      }));
    }

    it.each([
      { name: 'with the VAT id first', first: WITH_VAT, second: WITHOUT_VAT },
      { name: 'without the VAT id first', first: WITHOUT_VAT, second: WITH_VAT },
    ])(
      'two concurrent uploads under different keys, $name: exactly one booking, the other 409 naming it',
      async ({ first, second }) => {
        const company = await t.newCompany();
        // Hold the document's lock so both requests are inside their transactions at once, then
        // let them go in arrival order: the race the lock exists for, made deterministic.
        const gate = await db.connect();
        try {
          await gate.query('BEGIN');
          await gate.query(`SELECT claim_supplier_document($1, $2, NULL, 'gate')`, [
            company.companyId,
            DOCUMENT,
          ]);
          const firstAnswer = send(company, upload(first));
          await until(async () => (await waitingForDocumentLock()) === 1);
          const secondAnswer = send(company, upload(second));
          await until(async () => (await waitingForDocumentLock()) === 2);
          await gate.query('COMMIT');

          const [winner, loser] = await Promise.all([firstAnswer, secondAnswer]);
          expect(winner.status).toBe(201);
          expect(loser).toMatchObject({
            status: 409,
            body: { code: 'purchase_invoice_duplicate', existingPurchaseInvoiceId: winner.body.id },
          });
        } finally {
          await gate.query('ROLLBACK').catch(() => undefined);
          gate.release();
        }
        expect(await ledgerOf(company)).toEqual(BOOKED_ONCE);
        expect(await booksOf(company)).toMatchObject({ purchaseInvoices: 1, journalEntries: 1 });
      },
    );

    it('10 parallel uploads, with and without the VAT id, under 10 keys → exactly one booking', async () => {
      const company = await t.newCompany();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, index) => send(company, upload(index % 2 ? WITHOUT_VAT : WITH_VAT))),
      );

      const created = answers.filter((answer) => answer.status === 201);
      expect(created).toHaveLength(1);
      for (const answer of answers.filter((candidate) => candidate !== created[0])) {
        expect(answer).toMatchObject({
          status: 409,
          body: { code: 'purchase_invoice_duplicate', existingPurchaseInvoiceId: created[0].body.id },
        });
      }
      expect(await ledgerOf(company)).toEqual(BOOKED_ONCE);
    });

    describe('in the database, for writers that bypass the application', () => {
      function insertSql(client: Pick<Pool, 'query'>, companyId: string, vatId: string | null) {
        return client.query(
          `INSERT INTO purchase_invoices (id, company_id, supplier, supplier_key, supplier_vat_id, supplier_name_key,
                                          document_number, document_key, currency, issue_date, vat_breakdown,
                                          net_total, vat_total, gross_total, created_at)
           VALUES ($1, $2, $3, $4, $5, 'uab tiekejas', $6, $6, 'EUR', '2026-11-30', '[]', 0, 0, 0, now())`,
          [
            randomUUID(),
            companyId,
            JSON.stringify({ ...WITHOUT_VAT, vatId }),
            vatId === null ? 'name:uab tiekejas' : `vat:${vatId}`,
            vatId,
            DOCUMENT,
          ],
        );
      }

      it('an INSERT without the VAT id of a document recorded with it → unique_violation (the trigger)', async () => {
        const company = await t.newCompany();
        const recorded = await record(company, upload(WITH_VAT));

        const refused = await insertSql(db, company.companyId, null).then(
          () => new Error('the insert succeeded'),
          (error: unknown) => error,
        );

        expect(refused).toMatchObject({
          code: '23505',
          constraint: 'uq_purchase_invoices_supplier_identity',
        });
        expect(String((refused as Error).message)).toContain(recorded.body.id);
        // Another VAT id is another supplier: accepted.
        await expect(insertSql(db, company.companyId, 'LT100001111111')).resolves.toMatchObject({
          rowCount: 1,
        });
      });

      it('two racing INSERTs (with, then without the VAT id): the second waits for the first, then is refused', async () => {
        const company = await t.newCompany();
        const [first, second] = [await db.connect(), await db.connect()];
        try {
          await first.query('BEGIN');
          await second.query('BEGIN');
          await insertSql(first, company.companyId, 'LT100009999999');
          const racing = insertSql(second, company.companyId, null).then(
            () => new Error('the insert succeeded'),
            (error: unknown) => error,
          );
          await until(async () => (await waitingForDocumentLock('%INSERT INTO purchase_invoices%')) === 1);
          await first.query('COMMIT');

          expect(await racing).toMatchObject({
            code: '23505',
            constraint: 'uq_purchase_invoices_supplier_identity',
          });
        } finally {
          await Promise.all([first, second].map((client) => client.query('ROLLBACK').catch(() => undefined)));
          first.release();
          second.release();
        }
        expect(await purchaseInvoiceIds(company)).toHaveLength(1);
      });
    });
  });
});
