import type { Pool } from 'pg';
import { anInvoice } from '../support/invoice.builder';
import {
  type InvoiceBody,
  invoicePostingLines,
  salesInvoiceCalls,
  UUID,
} from '../support/sales-invoice-calls';
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

  const { create, issue, ledgerEntries, storedPostingLines } = salesInvoiceCalls(() => ({ t, db }));

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
});
