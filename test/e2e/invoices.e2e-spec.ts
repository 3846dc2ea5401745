import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface InvoiceBody {
  id: string;
  number: string;
  series: string;
  sequence: number;
  currency: string;
  netTotal: number;
  vatTotal: number;
  grossTotal: number;
  createdAt: string;
}

interface JournalEntryBody {
  id: string;
  object: string;
  currency: string;
  sourceType: string;
  sourceId: string;
  memo: string;
  postedAt: string;
  entryDate: string;
  lines: Array<{ account: string; debit: number; credit: number }>;
}

/** The posting of a sales invoice as GET /v1/ledger/entries shows it (zero lines dropped). */
function invoicePostingLines(totals: { netTotal: number; vatTotal: number; grossTotal: number }) {
  return [
    { account: 'accounts_receivable', debit: totals.grossTotal, credit: 0 },
    { account: 'revenue', debit: 0, credit: totals.netTotal },
    ...(totals.vatTotal === 0 ? [] : [{ account: 'vat_payable', debit: 0, credit: totals.vatTotal }]),
  ];
}

describe('sales invoices', () => {
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

  function create(company: TestCompany, body: Record<string, unknown>) {
    return t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey())
      .send(body);
  }

  async function issue(
    company: TestCompany,
    body: Record<string, unknown>,
  ): Promise<Response & { body: InvoiceBody }> {
    const response = await create(company, body);
    expect(response.status).toBe(201);
    return response;
  }

  async function ledgerEntries(
    company: TestCompany,
    query = '',
  ): Promise<{ data: JournalEntryBody[]; hasMore: boolean }> {
    const response = await t.http.get(`/v1/ledger/entries${query}`).set(company.auth);
    expect(response.status).toBe(200);
    expect(response.body.object).toBe('list');
    return response.body as { data: JournalEntryBody[]; hasMore: boolean };
  }

  async function storedTotals(invoiceId: string) {
    const { rows } = await db.query(
      `SELECT net_total::int, vat_total::int, gross_total::int, vat_breakdown,
              (SELECT json_agg(net_amount ORDER BY position) FROM invoice_lines WHERE invoice_id = i.id) AS line_nets
         FROM invoices i WHERE id = $1`,
      [invoiceId],
    );
    expect(rows).toHaveLength(1);
    return rows[0] as {
      net_total: number;
      vat_total: number;
      gross_total: number;
      vat_breakdown: unknown;
      line_nets: number[];
    };
  }

  async function storedPostingLines(invoiceId: string) {
    const { rows } = await db.query(
      `SELECT l.account, l.debit::int, l.credit::int
         FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
        WHERE e.source_type = 'invoice' AND e.source_id = $1
        ORDER BY l.line_no`,
      [invoiceId],
    );
    return rows;
  }

  describe('POST /v1/sales/invoices/create', () => {
    it('issues INV-000001 with the documented shape, defaults applied, and stores it with its posting', async () => {
      const company = await t.newCompany({ countryCode: 'GB', currency: 'GBP' });
      const body = anInvoice()
        .withOrderId('order-1041')
        .with({ dueDate: '2099-12-30' })
        .withLine({ description: 'Consulting', quantity: '2', unitPrice: 5000, vatRate: '21' })
        .build();
      const before = new Date();

      const response = await create(company, body);

      const after = new Date();
      expect(response.status).toBe(201);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers.location).toBe(`/v1/sales/invoices/${response.body.id}`);
      const invoice = JSON.parse(response.text) as Record<string, unknown>;
      expect(invoice).toStrictEqual({
        id: expect.stringMatching(UUID),
        object: 'invoice',
        number: 'INV-000001',
        series: 'INV',
        sequence: 1,
        status: 'issued',
        orderId: 'order-1041',
        currency: 'GBP',
        issueDate: expect.any(String),
        dueDate: '2099-12-30',
        // The company profile at issue: without one, its name and country.
        seller: {
          legalName: 'Test Company',
          vatId: null,
          registrationNumber: null,
          address: { street: null, city: null, postalCode: null, countryCode: 'GB' },
          iban: null,
          email: null,
          peppolId: null,
        },
        customer: {
          name: 'UAB Pirkėjas',
          vatId: 'LT100001234567',
          countryCode: 'LT',
          address: null,
          email: null,
        },
        lines: [
          {
            position: 1,
            description: 'Consulting',
            quantity: '2',
            unitPrice: 5000,
            vatRate: '21',
            netAmount: 10000,
          },
        ],
        vatBreakdown: [{ vatRate: '21', netAmount: 10000, vatAmount: 2100 }],
        netTotal: 10000,
        vatTotal: 2100,
        grossTotal: 12100,
        creditedTotal: 0,
        paidTotal: 0,
        outstandingAmount: 12100,
        paymentStatus: 'unpaid',
        creditStatus: 'none',
        notes: null,
        metadata: {},
        createdAt: expect.stringMatching(ISO_INSTANT),
      });
      expect([before.toISOString().slice(0, 10), after.toISOString().slice(0, 10)]).toContain(
        invoice.issueDate,
      );
      const createdAt = Date.parse(invoice.createdAt as string);
      expect(createdAt).toBeGreaterThanOrEqual(before.getTime());
      expect(createdAt).toBeLessThanOrEqual(after.getTime());

      const { rows } = await db.query(
        `SELECT company_id, series, sequence::int, number, status, order_id, currency,
                to_char(issue_date, 'YYYY-MM-DD') AS issue_date, to_char(due_date, 'YYYY-MM-DD') AS due_date,
                customer, net_total::int, vat_total::int, gross_total::int, created_at
           FROM invoices WHERE id = $1`,
        [invoice.id],
      );
      expect(rows).toEqual([
        {
          company_id: company.companyId,
          series: 'INV',
          sequence: 1,
          number: 'INV-000001',
          status: 'issued',
          order_id: 'order-1041',
          currency: 'GBP',
          issue_date: invoice.issueDate,
          due_date: '2099-12-30',
          customer: invoice.customer,
          net_total: 10000,
          vat_total: 2100,
          gross_total: 12100,
          created_at: new Date(invoice.createdAt as string),
        },
      ]);
      const { rows: lines } = await db.query(
        `SELECT position, description, quantity::text, unit_price::int, vat_rate::text, net_amount::int, company_id
           FROM invoice_lines WHERE invoice_id = $1`,
        [invoice.id],
      );
      expect(lines).toEqual([
        {
          position: 1,
          description: 'Consulting',
          quantity: '2.0000',
          unit_price: 5000,
          vat_rate: '21.00',
          net_amount: 10000,
          company_id: company.companyId,
        },
      ]);
      const { data: entries } = await ledgerEntries(company);
      expect(entries).toEqual([
        {
          id: expect.stringMatching(UUID),
          object: 'journal_entry',
          currency: 'GBP',
          sourceType: 'invoice',
          sourceId: invoice.id,
          memo: 'Invoice INV-000001',
          postedAt: invoice.createdAt,
          entryDate: invoice.issueDate,
          lines: invoicePostingLines({ netTotal: 10000, vatTotal: 2100, grossTotal: 12100 }),
        },
      ]);
    });

    it('echoes explicit series, currency, issue date, full customer and notes; absent optionals are null', async () => {
      const company = await t.newCompany();
      const customer = {
        name: 'UAB Pirkėjas',
        vatId: 'LT100001234567',
        countryCode: 'LT',
        address: 'Gedimino pr. 1, Vilnius',
        email: 'ap@example.lt',
      };

      const explicit = await issue(
        company,
        anInvoice()
          .with({ series: 'B2B', currency: 'USD', issueDate: '2026-01-15', customer, notes: 'Thank you' })
          .withLine()
          .build(),
      );
      const minimal = await issue(
        company,
        anInvoice()
          .with({ customer: { name: 'Jonas', countryCode: 'LT' } })
          .withLine()
          .build(),
      );

      expect(explicit.body).toMatchObject({
        number: 'B2B-000001',
        series: 'B2B',
        currency: 'USD',
        issueDate: '2026-01-15',
        dueDate: null,
        orderId: null,
        customer,
        notes: 'Thank you',
      });
      expect(minimal.body).toMatchObject({
        number: 'INV-000001',
        orderId: null,
        dueDate: null,
        notes: null,
        currency: 'EUR',
        customer: { name: 'Jonas', vatId: null, countryCode: 'LT', address: null, email: null },
      });
    });

    it('GET /v1/sales/invoices/{id} returns byte-identical JSON to the create response', async () => {
      const company = await t.newCompany();
      const created = await issue(
        company,
        anInvoice()
          .withOrderId()
          .with({ dueDate: '2099-01-31', notes: 'Payment by bank transfer' })
          .withLine({ quantity: '2.50', vatRate: '21.00' })
          .withLine({ description: 'Travel', quantity: '1', unitPrice: 12345, vatRate: '0' })
          .build(),
      );

      const fetched = await t.http.get(`/v1/sales/invoices/${created.body.id}`).set(company.auth);

      expect(fetched.status).toBe(200);
      expect(fetched.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(fetched.text).toBe(created.text);
    });
  });

  describe('EN 16931 rounding through the API', () => {
    it('VAT is rounded on the sum of a rate: 3 × (1 @ 21%) → net 3, VAT round(0.63) = 1, gross 4', async () => {
      const company = await t.newCompany();
      const line = { description: 'Sticker', quantity: '1', unitPrice: 1, vatRate: '21' };

      const { body: invoice } = await issue(
        company,
        anInvoice().withLine(line).withLine(line).withLine(line).build(),
      );

      expect(invoice).toMatchObject({
        lines: [1, 2, 3].map((position) => ({ position, ...line, netAmount: 1 })),
        vatBreakdown: [{ vatRate: '21', netAmount: 3, vatAmount: 1 }],
        netTotal: 3,
        vatTotal: 1,
        grossTotal: 4,
      });
      expect(await storedTotals(invoice.id)).toEqual({
        net_total: 3,
        vat_total: 1,
        gross_total: 4,
        vat_breakdown: [{ vatRate: '21', netAmount: 3, vatAmount: 1 }],
        line_nets: [1, 1, 1],
      });
      expect(await storedPostingLines(invoice.id)).toEqual([
        { account: 'accounts_receivable', debit: 4, credit: 0 },
        { account: 'revenue', debit: 0, credit: 3 },
        { account: 'vat_payable', debit: 0, credit: 1 },
      ]);
    });

    it('mixed rates (21, 9, 0) → breakdown sorted by rate descending, each rate rounded on its sum', async () => {
      const company = await t.newCompany();
      // Line nets: 2 × 1250 = 2500; 1.5 × 333 = 499.5 → 500; 3 × 1999 = 5997; 0.5 × 100 = 50; 1 × 1005 = 1005.
      // 21%: net 5997 + 1005 = 7002, VAT 1470.42 → 1470. 9%: net 500 + 50 = 550, VAT 49.5 → 50.
      // 0%: net 2500, VAT 0. Net 10052, VAT 1520, gross 11572.
      const body = anInvoice()
        .withLine({ description: 'Books', quantity: '2', unitPrice: 1250, vatRate: '0' })
        .withLine({ description: 'Food', quantity: '1.5', unitPrice: 333, vatRate: '9' })
        .withLine({ description: 'Consulting', quantity: '3', unitPrice: 1999, vatRate: '21' })
        .withLine({ description: 'Snacks', quantity: '0.5', unitPrice: 100, vatRate: '9' })
        .withLine({ description: 'Licence', quantity: '1', unitPrice: 1005, vatRate: '21.00' })
        .build();

      const { body: invoice } = await issue(company, body);

      const breakdown = [
        { vatRate: '21', netAmount: 7002, vatAmount: 1470 },
        { vatRate: '9', netAmount: 550, vatAmount: 50 },
        { vatRate: '0', netAmount: 2500, vatAmount: 0 },
      ];
      expect(invoice).toMatchObject({
        lines: [
          { position: 1, quantity: '2', vatRate: '0', netAmount: 2500 },
          { position: 2, quantity: '1.5', vatRate: '9', netAmount: 500 },
          { position: 3, quantity: '3', vatRate: '21', netAmount: 5997 },
          { position: 4, quantity: '0.5', vatRate: '9', netAmount: 50 },
          { position: 5, quantity: '1', vatRate: '21', netAmount: 1005 },
        ],
        vatBreakdown: breakdown,
        netTotal: 10052,
        vatTotal: 1520,
        grossTotal: 11572,
      });
      expect(await storedTotals(invoice.id)).toEqual({
        net_total: 10052,
        vat_total: 1520,
        gross_total: 11572,
        vat_breakdown: breakdown,
        line_nets: [2500, 500, 5997, 50, 1005],
      });
      expect(await storedPostingLines(invoice.id)).toEqual([
        { account: 'accounts_receivable', debit: 11572, credit: 0 },
        { account: 'revenue', debit: 0, credit: 10052 },
        { account: 'vat_payable', debit: 0, credit: 1520 },
      ]);
    });

    it('a line net is rounded half away from zero: 0.5 × 3 = 1.5 → 2', async () => {
      const company = await t.newCompany();

      const { body: invoice } = await issue(
        company,
        anInvoice()
          .withLine({ description: 'Half unit', quantity: '0.5', unitPrice: 3, vatRate: '0' })
          .build(),
      );

      expect(invoice).toMatchObject({
        lines: [{ position: 1, quantity: '0.5', unitPrice: 3, vatRate: '0', netAmount: 2 }],
        vatBreakdown: [{ vatRate: '0', netAmount: 2, vatAmount: 0 }],
        netTotal: 2,
        vatTotal: 0,
        grossTotal: 2,
      });
      expect((await storedTotals(invoice.id)).line_nets).toEqual([2]);
    });
  });

  describe('GET /v1/sales/invoices', () => {
    it('orders by series then sequence and pages with startingAfter: no duplicates, nothing missing', async () => {
      const company = await t.newCompany();
      const inSeries = (series: string) => anInvoice().with({ series }).withLine().build();
      const created: InvoiceBody[] = [];
      for (const series of ['INV', 'B2B', 'INV', 'INV', 'B2B', 'INV', 'INV']) {
        created.push((await issue(company, inSeries(series))).body);
      }
      const expectedOrder = [
        ...created.filter((invoice) => invoice.series === 'B2B'),
        ...created.filter((invoice) => invoice.series === 'INV'),
      ];
      expect(expectedOrder.map((invoice) => invoice.number)).toEqual([
        'B2B-000001',
        'B2B-000002',
        'INV-000001',
        'INV-000002',
        'INV-000003',
        'INV-000004',
        'INV-000005',
      ]);

      const pages: Array<{ object: string; data: InvoiceBody[]; hasMore: boolean }> = [];
      let cursor: string | undefined;
      do {
        const response = await t.http
          .get(`/v1/sales/invoices?limit=3${cursor === undefined ? '' : `&startingAfter=${cursor}`}`)
          .set(company.auth);
        expect(response.status).toBe(200);
        pages.push(response.body);
        cursor = pages.at(-1)?.data.at(-1)?.id;
      } while (pages.at(-1)?.hasMore === true && pages.length < 5);

      expect(pages.map((page) => page.object)).toEqual(['list', 'list', 'list']);
      expect(pages.map((page) => page.data.length)).toEqual([3, 3, 1]);
      expect(pages.map((page) => page.hasMore)).toEqual([true, true, false]);
      expect(pages.flatMap((page) => page.data)).toEqual(expectedOrder);

      const afterLast = await t.http
        .get(`/v1/sales/invoices?startingAfter=${expectedOrder[6].id}`)
        .set(company.auth);
      expect(afterLast.body).toEqual({ object: 'list', data: [], hasMore: false });
      const all = await t.http.get('/v1/sales/invoices').set(company.auth);
      expect(all.body).toEqual({ object: 'list', data: expectedOrder, hasMore: false });
    });

    it('numbers are gapless per (company, series), independently, even around rejected requests', async () => {
      const company = await t.newCompany();
      const other = await t.newCompany();
      const orderId = `order-${Date.now()}`;
      const numbers: string[] = [];
      numbers.push((await issue(company, anInvoice().withOrderId(orderId).withLine().build())).body.number);
      numbers.push(
        (await issue(company, anInvoice().with({ series: 'B2B' }).withLine().build())).body.number,
      );

      const duplicateOrder = await create(company, anInvoice().withOrderId(orderId).withLine().build());
      const dueBeforeIssue = await create(
        company,
        anInvoice().with({ issueDate: '2026-02-01', dueDate: '2026-01-31' }).withLine().build(),
      );
      expect(duplicateOrder.status).toBe(409);
      expect(JSON.parse(duplicateOrder.text)).toMatchObject({ code: 'order_already_invoiced' });
      expect(dueBeforeIssue.status).toBe(422);
      expect(JSON.parse(dueBeforeIssue.text)).toMatchObject({ code: 'due_date_before_issue_date' });

      numbers.push((await issue(company, anInvoice().withLine().build())).body.number);
      numbers.push(
        (await issue(company, anInvoice().with({ series: 'B2B' }).withLine().build())).body.number,
      );
      numbers.push((await issue(company, anInvoice().withLine().build())).body.number);
      const otherFirst = (await issue(other, anInvoice().withLine().build())).body.number;

      expect(numbers).toEqual(['INV-000001', 'B2B-000001', 'INV-000002', 'B2B-000002', 'INV-000003']);
      expect(otherFirst).toBe('INV-000001');
      const { rows } = await db.query(
        `SELECT series, array_agg(sequence::int ORDER BY sequence) AS sequences
           FROM invoices WHERE company_id = $1 GROUP BY series ORDER BY series`,
        [company.companyId],
      );
      expect(rows).toEqual([
        { series: 'B2B', sequences: [1, 2] },
        { series: 'INV', sequences: [1, 2, 3] },
      ]);
      const { rows: counters } = await db.query(
        `SELECT series, last_value::int FROM document_sequences WHERE company_id = $1 ORDER BY series`,
        [company.companyId],
      );
      expect(counters).toEqual([
        { series: 'B2B', last_value: 2 },
        { series: 'INV', last_value: 3 },
      ]);
    });
  });

  describe('ledger', () => {
    it('GET /v1/ledger/entries lists one balanced entry per invoice in posting order; no VAT line at 0%', async () => {
      const company = await t.newCompany();
      const standard = (
        await issue(company, anInvoice().withLine({ quantity: '2', unitPrice: 5000, vatRate: '21' }).build())
      ).body;
      const zeroRated = (
        await issue(company, anInvoice().withLine({ quantity: '1', unitPrice: 3000, vatRate: '0' }).build())
      ).body;
      const mixed = (
        await issue(
          company,
          anInvoice()
            .withLine({ quantity: '1', unitPrice: 1000, vatRate: '21' })
            .withLine({ quantity: '1', unitPrice: 1000, vatRate: '9' })
            .build(),
        )
      ).body;
      expect(
        [standard, zeroRated, mixed].map(({ netTotal, vatTotal, grossTotal }) => [
          netTotal,
          vatTotal,
          grossTotal,
        ]),
      ).toEqual([
        [10000, 2100, 12100],
        [3000, 0, 3000],
        [2000, 300, 2300],
      ]);

      const { data: entries, hasMore } = await ledgerEntries(company);

      expect(hasMore).toBe(false);
      expect(entries).toEqual(
        [standard, zeroRated, mixed].map((invoice) => ({
          id: expect.stringMatching(UUID),
          object: 'journal_entry',
          currency: 'EUR',
          sourceType: 'invoice',
          sourceId: invoice.id,
          memo: `Invoice ${invoice.number}`,
          postedAt: invoice.createdAt,
          entryDate: invoice.issueDate,
          lines: invoicePostingLines(invoice),
        })),
      );
      expect(entries[1].lines).toEqual([
        { account: 'accounts_receivable', debit: 3000, credit: 0 },
        { account: 'revenue', debit: 0, credit: 3000 },
      ]);
      for (const entry of entries) {
        const debits = entry.lines.reduce((sum, line) => sum + line.debit, 0);
        const credits = entry.lines.reduce((sum, line) => sum + line.credit, 0);
        expect(debits).toBe(credits);
        expect(await storedPostingLines(entry.sourceId)).toEqual(entry.lines);
      }

      const firstPage = await ledgerEntries(company, '?limit=2');
      const secondPage = await ledgerEntries(company, `?limit=2&startingAfter=${firstPage.data[1].id}`);
      expect(firstPage.hasMore).toBe(true);
      expect(secondPage.hasMore).toBe(false);
      expect([...firstPage.data, ...secondPage.data]).toEqual(entries);
    });

    it('GET /v1/ledger/trial-balance sums per account and currency, and debits equal credits', async () => {
      const company = await t.newCompany();
      await issue(company, anInvoice().withLine({ quantity: '2', unitPrice: 5000, vatRate: '21' }).build());
      await issue(company, anInvoice().withLine({ quantity: '1', unitPrice: 3000, vatRate: '0' }).build());
      await issue(
        company,
        anInvoice()
          .withLine({ quantity: '1', unitPrice: 1000, vatRate: '21' })
          .withLine({ quantity: '1', unitPrice: 1000, vatRate: '9' })
          .build(),
      );

      const response = await t.http.get('/v1/ledger/trial-balance').set(company.auth);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        object: 'trial_balance',
        data: [
          {
            account: 'accounts_receivable',
            currency: 'EUR',
            debitTotal: '17400',
            creditTotal: '0',
            balance: '17400',
          },
          { account: 'revenue', currency: 'EUR', debitTotal: '0', creditTotal: '15000', balance: '-15000' },
          { account: 'vat_payable', currency: 'EUR', debitTotal: '0', creditTotal: '2400', balance: '-2400' },
        ],
        totals: [{ currency: 'EUR', debitTotal: '17400', creditTotal: '17400', balanced: true }],
      });
      const { rows } = await db.query(
        `SELECT sum(debit)::int AS debits, sum(credit)::int AS credits FROM journal_lines WHERE company_id = $1`,
        [company.companyId],
      );
      expect(rows).toEqual([{ debits: 17400, credits: 17400 }]);
    });

    it('an invoice in USD for a EUR company posts in USD: separate trial-balance rows per currency', async () => {
      const company = await t.newCompany({ currency: 'EUR' });
      const euro = (
        await issue(company, anInvoice().withLine({ quantity: '1', unitPrice: 10000, vatRate: '21' }).build())
      ).body;
      const dollar = (
        await issue(
          company,
          anInvoice()
            .with({ currency: 'USD' })
            .withLine({ quantity: '1', unitPrice: 5000, vatRate: '9' })
            .build(),
        )
      ).body;
      expect([euro.currency, dollar.currency]).toEqual(['EUR', 'USD']);

      const { data: entries } = await ledgerEntries(company);
      const balance = await t.http.get('/v1/ledger/trial-balance').set(company.auth);

      expect(entries.map((entry) => [entry.sourceId, entry.currency])).toEqual([
        [euro.id, 'EUR'],
        [dollar.id, 'USD'],
      ]);
      expect(balance.body).toEqual({
        object: 'trial_balance',
        data: [
          {
            account: 'accounts_receivable',
            currency: 'EUR',
            debitTotal: '12100',
            creditTotal: '0',
            balance: '12100',
          },
          { account: 'revenue', currency: 'EUR', debitTotal: '0', creditTotal: '10000', balance: '-10000' },
          { account: 'vat_payable', currency: 'EUR', debitTotal: '0', creditTotal: '2100', balance: '-2100' },
          {
            account: 'accounts_receivable',
            currency: 'USD',
            debitTotal: '5450',
            creditTotal: '0',
            balance: '5450',
          },
          { account: 'revenue', currency: 'USD', debitTotal: '0', creditTotal: '5000', balance: '-5000' },
          { account: 'vat_payable', currency: 'USD', debitTotal: '0', creditTotal: '450', balance: '-450' },
        ],
        totals: [
          { currency: 'EUR', debitTotal: '12100', creditTotal: '12100', balanced: true },
          { currency: 'USD', debitTotal: '5450', creditTotal: '5450', balanced: true },
        ],
      });
      const { rows } = await db.query(
        `SELECT e.currency, sum(l.debit)::int AS debits, sum(l.credit)::int AS credits
           FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
          WHERE l.company_id = $1 GROUP BY e.currency ORDER BY e.currency`,
        [company.companyId],
      );
      expect(rows).toEqual([
        { currency: 'EUR', debits: 12100, credits: 12100 },
        { currency: 'USD', debits: 5450, credits: 5450 },
      ]);
    });

    it('sums beyond 2^53 exactly: aggregates are decimal strings of minor units, as SQL sums them', async () => {
      const company = await t.newCompany();
      // 9,000 × 10^12 each: one invoice stays within 2^53 − 1, their sum does not.
      const large = anInvoice().withLine({ quantity: '9000', unitPrice: 1_000_000_000_000, vatRate: '0' });
      await issue(company, large.build());
      await issue(company, large.build());
      await issue(company, anInvoice().withLine({ quantity: '1', unitPrice: 1, vatRate: '0' }).build());

      const response = await t.http.get('/v1/ledger/trial-balance').set(company.auth);

      expect(response.status).toBe(200);
      // The JSON text itself: a number 18000000000000001 would already be rounded when parsed.
      expect(response.text).toContain('"debitTotal":"18000000000000001"');
      expect(response.body).toEqual({
        object: 'trial_balance',
        data: [
          {
            account: 'accounts_receivable',
            currency: 'EUR',
            debitTotal: '18000000000000001',
            creditTotal: '0',
            balance: '18000000000000001',
          },
          {
            account: 'revenue',
            currency: 'EUR',
            debitTotal: '0',
            creditTotal: '18000000000000001',
            balance: '-18000000000000001',
          },
        ],
        totals: [
          {
            currency: 'EUR',
            debitTotal: '18000000000000001',
            creditTotal: '18000000000000001',
            balanced: true,
          },
        ],
      });
      const { rows } = await db.query(
        `SELECT sum(debit)::text AS debits, sum(credit)::text AS credits FROM journal_lines WHERE company_id = $1`,
        [company.companyId],
      );
      expect(rows).toEqual([{ debits: '18000000000000001', credits: '18000000000000001' }]);
    });
  });

  it('issues a zero-value invoice (numbered, immutable) that posts no journal entry', async () => {
    const company = await t.newCompany();
    const response = await issue(company, anInvoice().withLine({ unitPrice: 0 }).build());
    expect(response.body).toMatchObject({ number: 'INV-000001', netTotal: 0, vatTotal: 0, grossTotal: 0 });
    const { rows } = await db.query(
      `SELECT count(*)::int AS count FROM journal_entries WHERE company_id = $1`,
      [company.companyId],
    );
    expect(rows[0].count).toBe(0);
  });
});
