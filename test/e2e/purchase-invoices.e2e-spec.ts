import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import {
  ISO_INSTANT,
  OPERATION,
  problemOf,
  type PurchaseInvoiceBody,
  purchaseBooks,
  purchaseInvoiceCalls,
  UUID,
} from '../support/purchase-invoice-calls';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { booksOf } = purchaseBooks(() => db);

describe('purchase invoices', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create, record, expectDuplicateOf } = purchaseInvoiceCalls(() => t);

  describe('POST /v1/purchases/invoices/create', () => {
    it('records the documented shape, stores document, lines and a balanced expense / VAT receivable / payables entry', async () => {
      const company = await t.newCompany({ currency: 'EUR' });
      const key = newKey();
      const body = aPurchaseInvoice()
        .withDocumentNumber('tk 2026/0042')
        .with({ dueDate: '2026-12-30' })
        .withLine({ description: 'Paper', quantity: '2', unitPrice: 5000, vatRate: '21' })
        .withLine({ description: 'Books', quantity: '1.5', unitPrice: 333, vatRate: '9.00' })
        .build();
      const before = new Date();

      const response = await create(company, body, key);

      const after = new Date();
      expect(response.status).toBe(201);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      const invoice = JSON.parse(response.text) as Record<string, unknown> & PurchaseInvoiceBody;
      expect(response.headers.location).toBe(`/v1/purchases/invoices/${invoice.id}`);
      // 2 × 5000 = 10000 @ 21 % → 2100; 1.5 × 333 = 499.5 → 500 @ 9 % → 45.
      expect(invoice).toStrictEqual({
        id: expect.stringMatching(UUID),
        object: 'purchase_invoice',
        documentNumber: 'tk 2026/0042',
        supplier: {
          name: 'UAB Tiekėjas',
          vatId: 'LT100009876543',
          countryCode: 'LT',
          address: null,
          email: null,
        },
        currency: 'EUR',
        issueDate: '2026-11-30',
        dueDate: '2026-12-30',
        lines: [
          {
            position: 1,
            description: 'Paper',
            quantity: '2',
            unitPrice: 5000,
            vatRate: '21',
            netAmount: 10000,
          },
          {
            position: 2,
            description: 'Books',
            quantity: '1.5',
            unitPrice: 333,
            vatRate: '9',
            netAmount: 500,
          },
        ],
        vatBreakdown: [
          { vatRate: '21', netAmount: 10000, vatAmount: 2100 },
          { vatRate: '9', netAmount: 500, vatAmount: 45 },
        ],
        netTotal: 10500,
        vatTotal: 2145,
        grossTotal: 12645,
        notes: null,
        metadata: {},
        createdAt: expect.stringMatching(ISO_INSTANT),
      });
      expect(Object.keys(invoice)).toEqual([
        'id',
        'object',
        'documentNumber',
        'supplier',
        'currency',
        'issueDate',
        'dueDate',
        'lines',
        'vatBreakdown',
        'netTotal',
        'vatTotal',
        'grossTotal',
        'notes',
        'metadata',
        'createdAt',
      ]);
      const createdAt = Date.parse(invoice.createdAt);
      expect(createdAt).toBeGreaterThanOrEqual(before.getTime());
      expect(createdAt).toBeLessThanOrEqual(after.getTime());

      const { rows } = await db.query(
        `SELECT company_id, supplier, supplier_key, document_number, document_key, currency,
                to_char(issue_date, 'YYYY-MM-DD') AS issue_date, to_char(due_date, 'YYYY-MM-DD') AS due_date,
                notes, vat_breakdown, net_total::int, vat_total::int, gross_total::int, created_at
           FROM purchase_invoices WHERE id = $1`,
        [invoice.id],
      );
      expect(rows).toEqual([
        {
          company_id: company.companyId,
          supplier: invoice.supplier,
          supplier_key: 'vat:LT100009876543',
          // As printed, and the form the business key compares.
          document_number: 'tk 2026/0042',
          document_key: 'TK2026/0042',
          currency: 'EUR',
          issue_date: '2026-11-30',
          due_date: '2026-12-30',
          notes: null,
          vat_breakdown: invoice.vatBreakdown,
          net_total: 10500,
          vat_total: 2145,
          gross_total: 12645,
          created_at: new Date(invoice.createdAt),
        },
      ]);
      const { rows: lines } = await db.query(
        `SELECT position, description, quantity::text, unit_price::int, vat_rate::text, net_amount::int, company_id
           FROM purchase_invoice_lines WHERE purchase_invoice_id = $1 ORDER BY position`,
        [invoice.id],
      );
      expect(lines).toEqual([
        {
          position: 1,
          description: 'Paper',
          quantity: '2.0000',
          unit_price: 5000,
          vat_rate: '21.00',
          net_amount: 10000,
          company_id: company.companyId,
        },
        {
          position: 2,
          description: 'Books',
          quantity: '1.5000',
          unit_price: 333,
          vat_rate: '9.00',
          net_amount: 500,
          company_id: company.companyId,
        },
      ]);

      const { rows: postings } = await db.query(
        `SELECT e.currency, e.memo, e.posted_at, l.account, l.debit::int, l.credit::int
           FROM journal_entries e JOIN journal_lines l ON l.entry_id = e.id
          WHERE e.company_id = $1 AND e.source_type = 'purchase_invoice' AND e.source_id = $2
          ORDER BY l.line_no`,
        [company.companyId, invoice.id],
      );
      const posting = { currency: 'EUR', memo: 'Purchase invoice tk 2026/0042 from UAB Tiekėjas' };
      const postedAt = new Date(invoice.createdAt);
      expect(postings).toEqual([
        { ...posting, posted_at: postedAt, account: 'expense', debit: 10500, credit: 0 },
        { ...posting, posted_at: postedAt, account: 'vat_receivable', debit: 2145, credit: 0 },
        { ...posting, posted_at: postedAt, account: 'accounts_payable', debit: 0, credit: 12645 },
      ]);

      const balance = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
      expect(balance.status).toBe(200);
      expect(balance.body).toEqual({
        object: 'trial_balance',
        data: [
          {
            account: 'accounts_payable',
            currency: 'EUR',
            debitTotal: '0',
            creditTotal: '12645',
            balance: '-12645',
          },
          { account: 'expense', currency: 'EUR', debitTotal: '10500', creditTotal: '0', balance: '10500' },
          {
            account: 'vat_receivable',
            currency: 'EUR',
            debitTotal: '2145',
            creditTotal: '0',
            balance: '2145',
          },
        ],
        totals: [{ currency: 'EUR', debitTotal: '12645', creditTotal: '12645', balanced: true }],
      });

      const books = await booksOf(company);
      expect(books).toMatchObject({ purchaseInvoices: 1, purchaseInvoiceLines: 2, journalEntries: 1 });
      expect(books.records).toEqual([
        { idempotency_key: key, operation: OPERATION, response_status: 201, response_body: response.text },
      ]);
    });

    it('defaults the currency to the company currency; echoes explicit values; absent optionals are null', async () => {
      const company = await t.newCompany({ countryCode: 'GB', currency: 'GBP' });
      const supplier = {
        name: 'UAB Tiekėjas',
        vatId: 'LT100009876543',
        countryCode: 'LT',
        address: 'Gedimino pr. 1, Vilnius',
        email: 'ar@example.lt',
      };

      const minimal = await record(
        company,
        aPurchaseInvoice().withSupplier({ name: 'Jonas', countryCode: 'LT' }).build(),
      );
      const explicit = await record(
        company,
        aPurchaseInvoice()
          .withSupplier(supplier)
          .with({ currency: 'USD', issueDate: '2026-01-15', dueDate: '2026-01-15', notes: 'Net 0' })
          .build(),
      );

      expect(minimal.body).toMatchObject({
        currency: 'GBP',
        dueDate: null,
        notes: null,
        supplier: { name: 'Jonas', vatId: null, countryCode: 'LT', address: null, email: null },
      });
      expect(explicit.body).toMatchObject({
        currency: 'USD',
        issueDate: '2026-01-15',
        dueDate: '2026-01-15',
        notes: 'Net 0',
        supplier,
      });
      const { rows } = await db.query('SELECT supplier_key FROM purchase_invoices WHERE id = $1', [
        minimal.body.id,
      ]);
      expect(rows).toEqual([{ supplier_key: 'name:jonas' }]);
    });

    it('a zero-value supplier invoice is recorded (its document number is taken) but posts no entry', async () => {
      const company = await t.newCompany();
      const body = aPurchaseInvoice().withLine({ unitPrice: 0 }).build();

      const recorded = await record(company, body);

      expect(recorded.body).toMatchObject({ netTotal: 0, vatTotal: 0, grossTotal: 0 });
      expect(await booksOf(company)).toMatchObject({ purchaseInvoices: 1, journalEntries: 0 });
      await expectDuplicateOf(await create(company, body), recorded.body.id);
    });

    it('dueDate before issueDate → 422 due_date_before_issue_date, stored under the key, nothing recorded', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = aPurchaseInvoice().with({ issueDate: '2026-02-01', dueDate: '2026-01-31' }).build();

      const rejected = await create(company, body, key);
      problemOf(rejected, 422, 'due_date_before_issue_date');
      const replay = await create(company, body, key);

      expect(replay.status).toBe(422);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(rejected.text);
      const books = await booksOf(company);
      expect(books).toMatchObject({ purchaseInvoices: 0, purchaseInvoiceLines: 0, journalEntries: 0 });
      expect(books.records).toMatchObject([{ idempotency_key: key, response_status: 422 }]);
    });
  });

  describe('reads', () => {
    it('GET /v1/purchases/invoices/{id} returns byte-identical JSON to the create response', async () => {
      const company = await t.newCompany();
      const created = await record(
        company,
        aPurchaseInvoice()
          .withDocumentNumber('  Sąsk. nr. 7 ')
          .withSupplier({
            name: 'UAB  Tiekėjas,',
            countryCode: 'LT',
            address: 'Vilnius',
            email: 'ar@example.lt',
          })
          .with({ dueDate: '2099-01-31', notes: 'Payment by bank transfer' })
          .withLine({ quantity: '2.50', vatRate: '21.00' })
          .withLine({ description: 'Delivery', quantity: '1', unitPrice: 12345, vatRate: '0' })
          .build(),
      );

      const fetched = await t.http.get(`/v1/purchases/invoices/${created.body.id}`).set(company.auth);

      expect(fetched.status).toBe(200);
      expect(fetched.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(fetched.text).toBe(created.text);
      expect(created.body.documentNumber).toBe('  Sąsk. nr. 7 ');
    });

    it("another company's id, an unknown id and a malformed id → 404 not_found", async () => {
      const owner = await t.newCompany();
      const other = await t.newCompany();
      const { body: invoice } = await record(owner, aPurchaseInvoice().build());

      for (const id of [invoice.id, '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
        const response = await t.http.get(`/v1/purchases/invoices/${id}`).set(other.auth);
        problemOf(response, 404, 'not_found');
      }
      const list = await t.http.get('/v1/purchases/invoices').set(other.auth);
      expect(list.body).toEqual({ object: 'list', data: [], hasMore: false });
    });

    it('GET /v1/purchases/invoices lists in the order recorded and pages with startingAfter', async () => {
      const company = await t.newCompany();
      const created: PurchaseInvoiceBody[] = [];
      for (let index = 0; index < 5; index += 1) {
        created.push(
          (await record(company, aPurchaseInvoice().withDocumentNumber(`INV-${index}`).build())).body,
        );
      }

      const pages: Array<{ object: string; data: PurchaseInvoiceBody[]; hasMore: boolean }> = [];
      let cursor: string | undefined;
      do {
        const response = await t.http
          .get(`/v1/purchases/invoices?limit=2${cursor === undefined ? '' : `&startingAfter=${cursor}`}`)
          .set(company.auth);
        expect(response.status).toBe(200);
        pages.push(response.body);
        cursor = pages.at(-1)?.data.at(-1)?.id;
      } while (pages.at(-1)?.hasMore === true && pages.length < 5);

      expect(pages.map((page) => [page.object, page.data.length, page.hasMore])).toEqual([
        ['list', 2, true],
        ['list', 2, true],
        ['list', 1, false],
      ]);
      expect(pages.flatMap((page) => page.data)).toEqual(created);
      expect(created.map((invoice) => invoice.documentNumber)).toEqual([
        'INV-0',
        'INV-1',
        'INV-2',
        'INV-3',
        'INV-4',
      ]);
      const afterLast = await t.http
        .get(`/v1/purchases/invoices?startingAfter=${created[4].id}`)
        .set(company.auth);
      expect(afterLast.body).toEqual({ object: 'list', data: [], hasMore: false });
    });
  });
});
