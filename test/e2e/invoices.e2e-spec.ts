import type { Pool } from 'pg';
import { anInvoice } from '../support/invoice.builder';
import { invoicePostingLines, ISO_INSTANT, salesInvoiceCalls, UUID } from '../support/sales-invoice-calls';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

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

  const { create, issue, ledgerEntries, storedTotals, storedPostingLines } = salesInvoiceCalls(() => ({
    t,
    db,
  }));

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
