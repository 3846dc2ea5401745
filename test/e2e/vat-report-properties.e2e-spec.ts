import fc from 'fast-check';
import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

/**
 * Property: for any mix of invoices (several months, currencies and VAT rates), partial and full
 * credit notes, purchase invoices and retries, the VAT report of any period equals, per currency,
 * the movements of the ledger's revenue, vat_payable, expense and vat_receivable accounts in the
 * journal entries dated within that period — to the cent — and, per rate, what the documents the
 * API answered add up to. Seeded, so a failure reproduces.
 */

const RATES = ['0', '5', '9', '21'];
const QUANTITIES = ['1', '2', '0.5', '3.25', '0.3333'];
/** Document dates across months; `null` is "today" (the default issue date). */
const DATES = ['2026-01-01', '2026-01-31', '2026-02-14', '2026-02-28', '2026-03-01', '2026-03-31', null];
const WINDOW_DAYS = [
  '2025-12-31',
  '2026-01-01',
  '2026-01-31',
  '2026-02-01',
  '2026-02-28',
  '2026-03-15',
  '2026-12-31',
];

type Line = { description: string; quantity: string; unitPrice: number; vatRate: string };
type Currency = 'EUR' | 'USD';

const line: fc.Arbitrary<Line> = fc.record({
  description: fc.constantFrom('Consulting', 'Paper'),
  quantity: fc.constantFrom(...QUANTITIES),
  unitPrice: fc.integer({ min: 0, max: 150_000 }),
  vatRate: fc.constantFrom(...RATES),
});
const currency = fc.constantFrom<Currency>('EUR', 'USD');
const date = fc.constantFrom(...DATES);

type Step =
  | { kind: 'invoice'; currency: Currency; date: string | null; lines: Line[] }
  | { kind: 'credit'; invoice: number; partial: Line | null }
  | { kind: 'purchase'; currency: Currency; date: string | null; lines: Line[]; supplier: number }
  | { kind: 'retry'; step: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('invoice' as const),
      currency,
      date,
      lines: fc.array(line, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('credit' as const),
      invoice: fc.nat(),
      partial: fc.option(line, { nil: null }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('purchase' as const),
      currency,
      date,
      lines: fc.array(line, { minLength: 1, maxLength: 3 }),
      supplier: fc.integer({ min: 0, max: 2 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retry' as const), step: fc.nat() }) },
);

const window = fc
  .tuple(fc.constantFrom(...WINDOW_DAYS), fc.constantFrom(...WINDOW_DAYS))
  .map(([a, b]) => (a <= b ? { from: a, to: b } : { from: b, to: a }));

interface Breakdown {
  vatRate: string;
  netAmount: number;
  vatAmount: number;
}

/** A document the API answered 201 for, as the report must count it. */
interface CountedDocument {
  side: 'sales' | 'purchases';
  sign: 1n | -1n;
  currency: string;
  date: string;
  vatBreakdown: Breakdown[];
}

interface Amounts {
  salesNet: bigint;
  salesVat: bigint;
  purchasesNet: bigint;
  purchasesVat: bigint;
}

const zero = (): Amounts => ({ salesNet: 0n, salesVat: 0n, purchasesNet: 0n, purchasesVat: 0n });

interface ReportRow {
  salesNet: string;
  salesVat: string;
  purchasesNet: string;
  purchasesVat: string;
  payable: string;
}
interface Report {
  object: string;
  from: string;
  to: string;
  currencies: Array<{ currency: string; rates: Array<ReportRow & { vatRate: string }>; totals: ReportRow }>;
}

function asBigInts(row: ReportRow): Amounts & { payable: bigint } {
  return {
    salesNet: BigInt(row.salesNet),
    salesVat: BigInt(row.salesVat),
    purchasesNet: BigInt(row.purchasesNet),
    purchasesVat: BigInt(row.purchasesVat),
    payable: BigInt(row.payable),
  };
}

describe('VAT report = ledger, over random document mixes', () => {
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

  /** Per currency: the period's movements of the four accounts the VAT report mirrors. */
  async function ledgerMovements(companyId: string, from: string, to: string): Promise<Map<string, Amounts>> {
    const { rows } = await db.query<{ currency: string; account: string; movement: string }>(
      `SELECT e.currency, l.account, (sum(l.debit) - sum(l.credit))::text AS movement
         FROM journal_lines l JOIN journal_entries e ON e.company_id = l.company_id AND e.id = l.entry_id
        WHERE l.company_id = $1 AND e.entry_date BETWEEN $2 AND $3
          AND l.account IN ('revenue', 'vat_payable', 'expense', 'vat_receivable')
        GROUP BY e.currency, l.account`,
      [companyId, from, to],
    );
    const movements = new Map<string, Amounts>();
    for (const row of rows) {
      const amounts = movements.get(row.currency) ?? zero();
      const debitMinusCredit = BigInt(row.movement);
      if (row.account === 'revenue') amounts.salesNet = -debitMinusCredit;
      if (row.account === 'vat_payable') amounts.salesVat = -debitMinusCredit;
      if (row.account === 'expense') amounts.purchasesNet = debitMinusCredit;
      if (row.account === 'vat_receivable') amounts.purchasesVat = debitMinusCredit;
      movements.set(row.currency, amounts);
    }
    return movements;
  }

  /** What the documents the API issued add up to, per currency and rate, for the period. */
  function expectedFromDocuments(documents: CountedDocument[], from: string, to: string) {
    const perCurrency = new Map<string, Map<string, Amounts>>();
    for (const document of documents) {
      if (document.date < from || document.date > to) continue;
      const rates = perCurrency.get(document.currency) ?? new Map<string, Amounts>();
      perCurrency.set(document.currency, rates);
      for (const row of document.vatBreakdown) {
        const amounts = rates.get(row.vatRate) ?? zero();
        rates.set(row.vatRate, amounts);
        const net = document.sign * BigInt(row.netAmount);
        const vat = document.sign * BigInt(row.vatAmount);
        if (document.side === 'sales') {
          amounts.salesNet += net;
          amounts.salesVat += vat;
        } else {
          amounts.purchasesNet += net;
          amounts.purchasesVat += vat;
        }
      }
    }
    return perCurrency;
  }

  async function run(company: TestCompany, steps: Step[], windows: Array<{ from: string; to: string }>) {
    const documents: CountedDocument[] = [];
    const invoices: Array<{ id: string }> = [];
    const sent: Array<{ path: string; key: string; body: object; text: string; status: number }> = [];
    const send = async (path: string, body: object) => {
      const key = newKey('vat');
      const response = await t.http.post(path).set(company.auth).set('Idempotency-Key', key).send(body);
      expect([201, 409, 422]).toContain(response.status);
      sent.push({ path, key, body, text: response.text, status: response.status });
      return response;
    };

    for (const [index, s] of steps.entries()) {
      switch (s.kind) {
        case 'invoice': {
          const body = {
            currency: s.currency,
            customer: { name: 'VAT Customer', countryCode: 'LT' },
            lines: s.lines,
            ...(s.date === null ? {} : { issueDate: s.date }),
          };
          const response = await send('/v1/sales/invoices/create', body);
          expect(response.status).toBe(201);
          invoices.push(response.body);
          documents.push({
            side: 'sales',
            sign: 1n,
            currency: response.body.currency,
            date: response.body.issueDate,
            vatBreakdown: response.body.vatBreakdown,
          });
          break;
        }
        case 'credit': {
          if (invoices.length === 0) break;
          const invoice = invoices[s.invoice % invoices.length];
          const body = {
            invoiceId: invoice.id,
            reason: 'other',
            ...(s.partial ? { lines: [s.partial] } : {}),
          };
          const response = await send('/v1/sales/credit-notes/create', body);
          if (response.status !== 201) {
            expect(['credit_exceeds_invoice', 'credit_note_empty', 'invoice_fully_credited']).toContain(
              response.body.code,
            );
            break;
          }
          documents.push({
            side: 'sales',
            sign: -1n,
            currency: response.body.currency,
            date: (response.body.createdAt as string).slice(0, 10),
            vatBreakdown: response.body.vatBreakdown,
          });
          break;
        }
        case 'purchase': {
          const body = {
            currency: s.currency,
            supplier: { name: `Supplier ${s.supplier}`, countryCode: 'LT' },
            documentNumber: `P-${index}`,
            issueDate: s.date ?? new Date().toISOString().slice(0, 10),
            lines: s.lines,
          };
          const response = await send('/v1/purchases/invoices/create', body);
          expect(response.status).toBe(201);
          documents.push({
            side: 'purchases',
            sign: 1n,
            currency: response.body.currency,
            date: response.body.issueDate,
            vatBreakdown: response.body.vatBreakdown,
          });
          break;
        }
        case 'retry': {
          if (sent.length === 0) break;
          const original = sent[s.step % sent.length];
          const replay = await t.http
            .post(original.path)
            .set(company.auth)
            .set('Idempotency-Key', original.key)
            .send(original.body);
          expect(replay.status).toBe(original.status);
          expect(replay.text).toBe(original.text);
          break;
        }
      }
    }

    const today = new Date().toISOString().slice(0, 10);
    const periods = [
      ...windows,
      { from: '2026-01-01', to: '2026-01-31' },
      { from: '2026-02-01', to: '2026-02-28' },
      { from: '2026-03-01', to: '2026-03-31' },
      { from: `${today.slice(0, 7)}-01`, to: today },
      { from: '2000-01-01', to: '2099-12-31' },
    ];
    for (const { from, to } of periods) {
      const response = await t.http.get('/v1/reports/vat').query({ from, to }).set(company.auth);
      expect(response.status).toBe(200);
      const report = response.body as Report;
      expect(report).toMatchObject({ object: 'vat_report', from, to });

      const ledger = await ledgerMovements(company.companyId, from, to);
      const expected = expectedFromDocuments(documents, from, to);
      const currencies = new Set([
        ...ledger.keys(),
        ...expected.keys(),
        ...report.currencies.map((c) => c.currency),
      ]);
      for (const code of currencies) {
        const part = report.currencies.find((c) => c.currency === code);
        const totals = part ? asBigInts(part.totals) : { ...zero(), payable: 0n };
        // The report equals the ledger, to the cent.
        const { payable, ...reported } = totals;
        expect(reported).toEqual(ledger.get(code) ?? zero());
        expect(payable).toBe(totals.salesVat - totals.purchasesVat);
        // Per rate, the report equals the documents the API answered, highest rate first.
        const expectedRates = [...(expected.get(code) ?? new Map<string, Amounts>()).entries()].sort(
          ([a], [b]) => Number(b) - Number(a),
        );
        expect(
          (part?.rates ?? []).map(({ vatRate, ...row }) => {
            const { payable: ratePayable, ...amounts } = asBigInts(row);
            expect(ratePayable).toBe(amounts.salesVat - amounts.purchasesVat);
            return [vatRate, amounts];
          }),
        ).toEqual(expectedRates);
      }
    }
  }

  it('equals the VAT accounts of the ledger for the same dates, and the documents per rate', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 18 }),
        fc.array(window, { minLength: 1, maxLength: 3 }),
        async (steps, windows) => {
          await run(await t.newCompany(), steps, windows);
        },
      ),
      { seed: 20_261_201, numRuns: 20, endOnFailure: true },
    );
  }, 180_000);

  it('answers an empty report for a period without documents', async () => {
    const company = await t.newCompany();
    const response = await t.http.get('/v1/reports/vat?from=2026-11-01&to=2026-11-30').set(company.auth);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      object: 'vat_report',
      from: '2026-11-01',
      to: '2026-11-30',
      currencies: [],
    });
  });

  it.each([
    ['from missing', 'to=2026-11-30', 'from'],
    ['to missing', 'from=2026-11-01', 'to'],
    ['not a calendar date', 'from=2026-02-30&to=2026-03-01', 'from'],
    ['to before from', 'from=2026-11-30&to=2026-11-01', 'to'],
    ['a repeated parameter', 'from=2026-11-01&from=2026-11-02&to=2026-11-30', 'from'],
  ])('%s → 400 validation_failed naming the parameter', async (_case, query, field) => {
    const company = await t.newCompany();
    const response = await t.http.get(`/v1/reports/vat?${query}`).set(company.auth);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect((response.body.errors as Array<{ field: string }>).map((error) => error.field)).toContain(field);
  });
});
