import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const CREATE = '/v1/purchases/invoices/create';
const OPERATION = 'purchases.invoices.create';
const REUSED_DETAIL = 'Idempotency-Key was already used with a different request payload.';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface PurchaseInvoiceBody {
  id: string;
  documentNumber: string;
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
  createdAt: string;
}

interface StoredRecord {
  idempotency_key: string;
  operation: string;
  response_status: number;
  response_body: string;
}

interface PurchaseBooks {
  purchaseInvoices: number;
  purchaseInvoiceLines: number;
  journalEntries: number;
  records: StoredRecord[];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function problemOf(response: Response, status: number, code: string): Record<string, unknown> {
  const body = JSON.parse(response.text) as Record<string, unknown>;
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  return body;
}

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

function post(app: TestApp, company: TestCompany, key: string, body: object) {
  return app.http.post(CREATE).set(company.auth).set('Idempotency-Key', key).send(body);
}

async function booksOf(company: TestCompany): Promise<PurchaseBooks> {
  const id = company.companyId;
  const [invoices, lines, journal, records] = await Promise.all([
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM purchase_invoices WHERE company_id = $1', [id]),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM purchase_invoice_lines WHERE company_id = $1', [
      id,
    ]),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM journal_entries WHERE company_id = $1', [id]),
    db.query<StoredRecord>(
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
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM purchase_invoices WHERE company_id = $1 ORDER BY created_at, id',
    [company.companyId],
  );
  return rows.map((row) => row.id);
}

describe('purchase invoices', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  function create(company: TestCompany, body: object, key: string = newKey()) {
    return post(t, company, key, body);
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

  describe('idempotency', () => {
    it('replays the stored 201, Location and byte-identical body with Idempotent-Replayed: true; the books change once', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = aPurchaseInvoice().build();
      const first = await create(company, body, key);
      expect(first.status).toBe(201);
      const booksAfterFirst = await booksOf(company);

      for (let attempt = 0; attempt < 2; attempt += 1) {
        const replay = await create(company, body, key);
        expect(replay.status).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.text).toBe(first.text);
        expect(replay.headers.location).toBe(first.headers.location);
        expect(replay.headers['idempotency-key-expires']).toBe(first.headers['idempotency-key-expires']);
      }
      // Omitting the company currency and sending it are one payload.
      const explicitCurrency = await create(company, { ...body, currency: 'EUR' }, key);
      expect(explicitCurrency.headers['idempotent-replayed']).toBe('true');
      expect(explicitCurrency.text).toBe(first.text);

      expect(await booksOf(company)).toEqual(booksAfterFirst);
      expect(booksAfterFirst).toMatchObject({ purchaseInvoices: 1, journalEntries: 1 });
    });

    it.each<[string, (body: Record<string, unknown>) => Record<string, unknown>]>([
      [
        'a different amount',
        (body) => ({ ...body, lines: [{ ...(body.lines as object[])[0], unitPrice: 5001 }] }),
      ],
      ['a different document number', (body) => ({ ...body, documentNumber: 'OTHER-1' })],
      ['another spelling of the same document number', (body) => ({ ...body, documentNumber: 'inv 001' })],
      [
        'a different supplier name',
        (body) => ({ ...body, supplier: { name: 'UAB Kitas', countryCode: 'LT' } }),
      ],
      ['a different issue date', (body) => ({ ...body, issueDate: '2026-12-01' })],
    ])('%s under the same key → 422 idempotency_key_reused; nothing runs', async (_name, change) => {
      const company = await t.newCompany();
      const key = newKey();
      const original = aPurchaseInvoice().withDocumentNumber('INV001').build();
      const first = await create(company, original, key);
      expect(first.status).toBe(201);
      const booksBefore = await booksOf(company);

      const reused = await create(company, change(original), key);

      expect(problemOf(reused, 422, 'idempotency_key_reused').detail).toBe(REUSED_DETAIL);
      expect(reused.headers['idempotent-replayed']).toBeUndefined();
      expect(await booksOf(company)).toEqual(booksBefore);
      const replay = await create(company, original, key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(first.text);
    });

    it('a key used for a sales invoice is a different key for a purchase invoice (scope: operation)', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const sales = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send(anInvoice().withLine().build());
      const purchase = await create(company, aPurchaseInvoice().build(), key);

      expect([sales.status, purchase.status]).toEqual([201, 201]);
      expect(purchase.headers['idempotent-replayed']).toBeUndefined();
      expect(
        (await booksOf(company)).records.map((row) => [row.idempotency_key, row.operation]).sort(),
      ).toEqual(
        [
          [key, OPERATION],
          [key, 'sales.invoices.create'],
        ].sort(),
      );
    });
  });

  describe('one purchase invoice per supplier document', () => {
    it('the same document under a new key → 409 purchase_invoice_duplicate naming the first; stored and replayed', async () => {
      const company = await t.newCompany();
      const body = aPurchaseInvoice().build();
      const first = await record(company, body);
      const key = newKey();
      const changed = {
        ...body,
        lines: [{ description: 'Re-upload', quantity: '1', unitPrice: 1, vatRate: '0' }],
      };

      const duplicate = await create(company, changed, key);
      await expectDuplicateOf(duplicate, first.body.id);
      expect(duplicate.headers['idempotent-replayed']).toBeUndefined();
      const replay = await create(company, changed, key);

      expect(replay.status).toBe(409);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(duplicate.text);
      expect(await purchaseInvoiceIds(company)).toEqual([first.body.id]);
      const books = await booksOf(company);
      expect(books).toMatchObject({ purchaseInvoices: 1, purchaseInvoiceLines: 1, journalEntries: 1 });
      expect(books.records.find((row) => row.idempotency_key === key)).toMatchObject({
        operation: OPERATION,
        response_status: 409,
        response_body: duplicate.text,
      });
    });

    it.each<{ name: string; first: Record<string, unknown>; second: Record<string, unknown> }>([
      {
        name: 'the same VAT id under another name',
        first: { supplier: { name: 'UAB Tiekėjas', vatId: 'LT100009876543', countryCode: 'LT' } },
        second: {
          supplier: { name: 'Tiekėjas UAB (Kaunas branch)', vatId: 'LT100009876543', countryCode: 'LT' },
        },
      },
      {
        name: 'no VAT id, the name spelled "UAB  Tiekėjas," then "uab tiekėjas"',
        first: { supplier: { name: 'UAB  Tiekėjas,', countryCode: 'LT' } },
        second: { supplier: { name: 'uab tiekėjas', countryCode: 'LT' } },
      },
      {
        name: 'no VAT id, the name with quotes, full-width letters and a no-break space',
        first: { supplier: { name: '„UAB Tiekėjas“', countryCode: 'LT' } },
        second: { supplier: { name: 'ＵＡＢ\u00a0TIEKĖJAS', countryCode: 'LT' } },
      },
      {
        name: 'document number "inv 001" then "INV001"',
        first: { documentNumber: 'inv 001' },
        second: { documentNumber: 'INV001' },
      },
      {
        name: 'document number with surrounding spaces',
        first: { documentNumber: 'INV-77' },
        second: { documentNumber: '  inv-77 ' },
      },
    ])('is recognised across representations: $name', async ({ first, second }) => {
      const company = await t.newCompany();
      const documentNumber = `DOC-${newKey()}`;
      const base = aPurchaseInvoice().withDocumentNumber(documentNumber);
      const original = await record(company, base.with(first).build());

      const again = await create(
        company,
        aPurchaseInvoice().withDocumentNumber(documentNumber).with(second).build(),
      );

      await expectDuplicateOf(again, original.body.id);
      expect(await booksOf(company)).toMatchObject({ purchaseInvoices: 1, journalEntries: 1 });
    });

    it('the same document number from two different suppliers → two purchase invoices', async () => {
      const company = await t.newCompany();
      const fromA = await record(
        company,
        aPurchaseInvoice()
          .withDocumentNumber('INV-0001')
          .withSupplier({ name: 'UAB Tiekėjas', vatId: 'LT100009876543', countryCode: 'LT' })
          .build(),
      );
      const fromB = await record(
        company,
        aPurchaseInvoice()
          .withDocumentNumber('INV-0001')
          .withSupplier({ name: 'UAB Kitas', vatId: 'LT100001111111', countryCode: 'LT' })
          .build(),
      );
      const fromC = await record(
        company,
        aPurchaseInvoice()
          .withDocumentNumber('INV-0001')
          .withSupplier({ name: 'Jonas Jonaitis', countryCode: 'LT' })
          .build(),
      );

      expect(new Set([fromA.body.id, fromB.body.id, fromC.body.id]).size).toBe(3);
      const { rows } = await db.query(
        `SELECT supplier_key, document_number FROM purchase_invoices WHERE company_id = $1 ORDER BY supplier_key`,
        [company.companyId],
      );
      expect(rows).toEqual([
        { supplier_key: 'name:jonas jonaitis', document_number: 'INV-0001' },
        { supplier_key: 'vat:LT100001111111', document_number: 'INV-0001' },
        { supplier_key: 'vat:LT100009876543', document_number: 'INV-0001' },
      ]);
      expect(await booksOf(company)).toMatchObject({ purchaseInvoices: 3, journalEntries: 3 });
    });

    it('the same supplier document in two companies → one purchase invoice each', async () => {
      const companyA = await t.newCompany();
      const companyB = await t.newCompany();
      const body = aPurchaseInvoice().build();

      await record(companyA, body);
      await record(companyB, body);

      expect(await booksOf(companyA)).toMatchObject({ purchaseInvoices: 1, journalEntries: 1 });
      expect(await booksOf(companyB)).toMatchObject({ purchaseInvoices: 1, journalEntries: 1 });
    });

    it('10 parallel uploads of one document under 10 keys → exactly one purchase invoice; the others name it', async () => {
      const company = await t.newCompany();
      const documentNumber = `PAR-${newKey()}`;
      const bodies = Array.from({ length: 10 }, (_, index) =>
        aPurchaseInvoice()
          .withDocumentNumber(index % 2 === 0 ? documentNumber : ` ${documentNumber.toLowerCase()} `)
          .withLine({ description: `Attempt ${index}` })
          .build(),
      );

      const answers = await Promise.all(
        bodies.map(async (body) => {
          const response = await fetch(`${t.baseUrl}${CREATE}`, {
            method: 'POST',
            headers: { ...company.auth, 'Content-Type': 'application/json', 'Idempotency-Key': newKey() },
            body: JSON.stringify(body),
          });
          return { status: response.status, body: (await response.json()) as Record<string, unknown> };
        }),
      );

      const created = answers.filter((answer) => answer.status === 201);
      const duplicates = answers.filter((answer) => answer.status === 409);
      expect(created).toHaveLength(1);
      expect(duplicates).toHaveLength(9);
      const winnerId = created[0].body.id;
      for (const duplicate of duplicates) {
        expect(duplicate.body).toMatchObject({
          code: 'purchase_invoice_duplicate',
          existingPurchaseInvoiceId: winnerId,
        });
      }
      expect(await purchaseInvoiceIds(company)).toEqual([winnerId]);
      const books = await booksOf(company);
      expect(books).toMatchObject({ purchaseInvoices: 1, purchaseInvoiceLines: 1, journalEntries: 1 });
      expect(books.records.map((row) => row.response_status).sort()).toEqual([201, ...Array(9).fill(409)]);
      const balance = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
      expect(balance.body.totals).toEqual([
        { currency: 'EUR', debitTotal: '12100', creditTotal: '12100', balanced: true },
      ]);
    });
  });

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

  describe('validation → 400 validation_failed naming the field; nothing is stored', () => {
    const valid = () => aPurchaseInvoice();
    const supplier = (fields: Record<string, unknown>) => valid().withSupplier(fields).build();
    const manyLines = Array.from({ length: 501 }, () => ({
      description: 'x',
      quantity: '1',
      unitPrice: 1,
      vatRate: '0',
    }));
    it.each<[string, string, Record<string, unknown>]>([
      ['documentNumber missing', 'documentNumber', valid().without('documentNumber').build()],
      ['documentNumber empty', 'documentNumber', valid().withDocumentNumber('').build()],
      ['documentNumber only spaces', 'documentNumber', valid().withDocumentNumber('   ').build()],
      [
        'documentNumber of 101 characters',
        'documentNumber',
        valid().withDocumentNumber('N'.repeat(101)).build(),
      ],
      // Upper-casing lengthens "ß" to "SS": the stored, normalized number would not fit.
      ['documentNumber of 60 "ß"', 'documentNumber', valid().withDocumentNumber('ß'.repeat(60)).build()],
      ['documentNumber with a line feed', 'documentNumber', valid().withDocumentNumber('INV\n001').build()],
      ['documentNumber a number', 'documentNumber', valid().with({ documentNumber: 1 }).build()],
      ['issueDate missing', 'issueDate', valid().without('issueDate').build()],
      ['issueDate not a date', 'issueDate', valid().with({ issueDate: '2026-02-30' }).build()],
      ['dueDate not a date', 'dueDate', valid().with({ dueDate: '30.12.2026' }).build()],
      ['supplier missing', 'supplier', valid().without('supplier').build()],
      ['supplier an array', 'supplier', valid().with({ supplier: [] }).build()],
      [
        'supplier name only punctuation, no VAT id',
        'supplier.name',
        supplier({ name: ' .,- ', countryCode: 'LT' }),
      ],
      [
        'supplier name only punctuation, null VAT id',
        'supplier.name',
        supplier({ name: '...', vatId: null, countryCode: 'LT' }),
      ],
      [
        'supplier VAT id in lower case',
        'supplier.vatId',
        supplier({ name: 'UAB', vatId: 'lt1000', countryCode: 'LT' }),
      ],
      ['supplier country missing', 'supplier.countryCode', supplier({ name: 'UAB Tiekėjas' })],
      ['currency unknown', 'currency', valid().with({ currency: 'EURO' }).build()],
      // build() fills in a default line when none was added: empty the lines afterwards.
      ['lines empty', 'lines', { ...valid().build(), lines: [] }],
      ['501 lines', 'lines', valid().with({ lines: manyLines }).build()],
      ['a negative unit price', 'lines[0].unitPrice', valid().withLine({ unitPrice: -1 }).build()],
      ['a VAT rate over 100', 'lines[0].vatRate', valid().withLine({ vatRate: '101' }).build()],
      ['customer (unknown field)', 'customer', { ...valid().without('supplier').build(), customer: {} }],
      ['series (purchase invoices have none)', 'series', valid().with({ series: 'INV' }).build()],
    ])('%s', async (_name, field, body) => {
      const company = await t.newCompany();
      const key = newKey();

      const response = await create(company, body, key);

      const problem = problemOf(response, 400, 'validation_failed');
      expect(problem.errors).toEqual(expect.arrayContaining([{ field, message: expect.any(String) }]));
      await expectNothingStored(company);
    });

    it('a supplier name of only punctuation is fine when the VAT id identifies the supplier', async () => {
      const company = await t.newCompany();
      const response = await create(
        company,
        aPurchaseInvoice().withSupplier({ name: '—', vatId: 'LT100009876543', countryCode: 'LT' }).build(),
      );
      expect(response.status).toBe(201);
    });

    it('a document number of exactly 100 characters is accepted', async () => {
      const company = await t.newCompany();
      const documentNumber = 'n'.repeat(100);
      const response = await create(company, aPurchaseInvoice().withDocumentNumber(documentNumber).build());
      expect(response.status).toBe(201);
      expect(response.body.documentNumber).toBe(documentNumber);
    });
  });
});

/**
 * Its own application, started after the suite above has closed its one: @Transactional()
 * resolves the most recently constructed TransactionHost process-wide, so two live apps in one
 * Jest worker would share (and, on close, break) each other's transactions.
 */
describe('purchase invoices after key expiry (IDEMPOTENCY_KEY_TTL=1)', () => {
  let shortLived: TestApp;

  beforeAll(async () => {
    shortLived = await startTestApp({ IDEMPOTENCY_KEY_TTL: '1' });
  });

  afterAll(async () => {
    await shortLived?.close();
  });

  it('a retry after the key expired records nothing: 409 purchase_invoice_duplicate naming the first', async () => {
    const company = await shortLived.newCompany();
    const key = newKey();
    const body = aPurchaseInvoice().build();
    const first = await post(shortLived, company, key, body);
    expect(first.status).toBe(201);
    const firstId = (first.body as PurchaseInvoiceBody).id;

    await sleep(2200);
    const retry = await post(shortLived, company, key, body);

    const problem = problemOf(retry, 409, 'purchase_invoice_duplicate');
    expect(problem.existingPurchaseInvoiceId).toBe(firstId);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await purchaseInvoiceIds(company)).toEqual([firstId]);
    const books = await booksOf(company);
    expect(books).toMatchObject({ purchaseInvoices: 1, purchaseInvoiceLines: 1, journalEntries: 1 });
    expect(books.records).toEqual([
      { idempotency_key: key, operation: OPERATION, response_status: 409, response_body: retry.text },
    ]);
  });
});
