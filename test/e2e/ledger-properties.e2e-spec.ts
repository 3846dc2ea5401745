import fc from 'fast-check';
import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

/**
 * Property: whatever mix of documents a company creates — invoices, credit notes, settlements,
 * purchase invoices, business duplicates, rejected over-credits and retries — the books stay
 * balanced per currency, running totals stay within their invoices, numbering stays gapless,
 * and no request ends in a 5xx. Seeded, so a failure reproduces.
 */

const RATES = ['0', '5', '9', '21'];
const QUANTITIES = ['1', '2', '0.5', '3.25'];

const line = fc.record({
  description: fc.constantFrom('Consulting', 'Paper', 'Licence'),
  quantity: fc.constantFrom(...QUANTITIES),
  unitPrice: fc.integer({ min: 0, max: 200_000 }),
  vatRate: fc.constantFrom(...RATES),
});

type Line = { description: string; quantity: string; unitPrice: number; vatRate: string };

type Step =
  | {
      kind: 'invoice';
      currency: 'EUR' | 'USD';
      lines: Array<Line>;
      orderSlot: number | null;
    }
  | { kind: 'credit'; invoice: number; partial: Line | null }
  | { kind: 'settle'; invoice: number; share: number; feeShare: number; payoutSlot: number }
  | {
      kind: 'purchase';
      supplierSlot: number;
      documentSlot: number;
      lines: Array<Line>;
    }
  | { kind: 'retry'; step: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('invoice' as const),
    currency: fc.constantFrom('EUR' as const, 'USD' as const),
    lines: fc.array(line, { minLength: 1, maxLength: 3 }),
    orderSlot: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
  }),
  fc.record({
    kind: fc.constant('credit' as const),
    invoice: fc.nat(),
    partial: fc.option(line, { nil: null }),
  }),
  fc.record({
    kind: fc.constant('settle' as const),
    invoice: fc.nat(),
    share: fc.double({ min: 0.05, max: 1.2, noNaN: true }),
    feeShare: fc.double({ min: 0, max: 0.1, noNaN: true }),
    payoutSlot: fc.integer({ min: 0, max: 5 }),
  }),
  fc.record({
    kind: fc.constant('purchase' as const),
    supplierSlot: fc.integer({ min: 0, max: 2 }),
    documentSlot: fc.integer({ min: 0, max: 3 }),
    lines: fc.array(line, { minLength: 1, maxLength: 2 }),
  }),
  fc.record({ kind: fc.constant('retry' as const), step: fc.nat() }),
);

interface Sent {
  path: string;
  key: string;
  body: Record<string, unknown>;
  status: number;
  text: string;
}

describe('ledger properties over random document mixes', () => {
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

  async function run(company: TestCompany, steps: Step[]): Promise<void> {
    const invoices: Array<{ id: string; grossTotal: number; currency: string }> = [];
    const sent: Sent[] = [];
    const send = async (path: string, body: Record<string, unknown>, key = newKey()): Promise<Sent> => {
      const response = await t.http.post(path).set(company.auth).set('Idempotency-Key', key).send(body);
      // Business outcomes only: never a server error, never a validation error from our own generator.
      expect([201, 404, 409, 422]).toContain(response.status);
      const result = { path, key, body, status: response.status, text: response.text };
      sent.push(result);
      return result;
    };

    for (const s of steps) {
      switch (s.kind) {
        case 'invoice': {
          const body: Record<string, unknown> = {
            currency: s.currency,
            customer: { name: 'Property Customer', countryCode: 'LT' },
            lines: s.lines,
          };
          if (s.orderSlot !== null) body.orderId = `order-${s.orderSlot}`;
          const result = await send('/v1/sales/invoices/create', body);
          if (result.status === 201) {
            const invoice = JSON.parse(result.text) as { id: string; grossTotal: number; currency: string };
            invoices.push(invoice);
          } else {
            expect(JSON.parse(result.text).code).toBe('order_already_invoiced');
          }
          break;
        }
        case 'credit': {
          if (invoices.length === 0) break;
          const invoice = invoices[s.invoice % invoices.length];
          const body: Record<string, unknown> = { invoiceId: invoice.id, reason: 'other' };
          if (s.partial) body.lines = [s.partial];
          const result = await send('/v1/sales/credit-notes/create', body);
          if (result.status !== 201) {
            expect(['credit_exceeds_invoice', 'credit_note_empty']).toContain(JSON.parse(result.text).code);
          }
          break;
        }
        case 'settle': {
          if (invoices.length === 0) break;
          const invoice = invoices[s.invoice % invoices.length];
          const amount = Math.max(1, Math.floor(invoice.grossTotal * s.share));
          const result = await send('/v1/settlements/create', {
            payoutId: `po_${company.companyId}_${s.payoutSlot}`,
            currency: invoice.currency,
            paidAt: '2026-11-30T10:00:00Z',
            feeAmount: Math.floor(amount * s.feeShare),
            allocations: [{ invoiceId: invoice.id, amount }],
          });
          if (result.status !== 201) {
            expect(['payout_already_settled', 'allocation_exceeds_outstanding']).toContain(
              JSON.parse(result.text).code,
            );
          }
          break;
        }
        case 'purchase': {
          const result = await send('/v1/purchases/invoices/create', {
            supplier: { name: `Supplier ${s.supplierSlot}`, countryCode: 'LT' },
            documentNumber: `DOC-${s.documentSlot}`,
            issueDate: '2026-11-30',
            lines: s.lines,
          });
          if (result.status !== 201) expect(JSON.parse(result.text).code).toBe('purchase_invoice_duplicate');
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
          expect(replay.headers['idempotent-replayed']).toBe('true');
          expect(replay.text).toBe(original.text);
          break;
        }
      }
    }

    const trialBalance = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
    for (const total of trialBalance.body.totals as Array<{ balanced: boolean }>)
      expect(total.balanced).toBe(true);
    const { rows: unbalanced } = await db.query(
      `SELECT e.currency FROM journal_lines l JOIN journal_entries e ON e.id = l.entry_id
        WHERE l.company_id = $1 GROUP BY e.currency HAVING sum(l.debit) <> sum(l.credit)`,
      [company.companyId],
    );
    expect(unbalanced).toEqual([]);
    const { rows: overdrawn } = await db.query(
      `SELECT id FROM invoices i
        WHERE company_id = $1
          AND (credited_total > gross_total OR paid_total > gross_total
               OR credited_total <> (SELECT coalesce(sum(gross_total), 0) FROM credit_notes c WHERE c.invoice_id = i.id)
               OR paid_total <> (SELECT coalesce(sum(amount), 0) FROM settlement_allocations a WHERE a.invoice_id = i.id))`,
      [company.companyId],
    );
    expect(overdrawn).toEqual([]);
    for (const table of ['invoices', 'credit_notes']) {
      const { rows } = await db.query(
        `SELECT series, count(*)::int AS count, max(sequence)::int AS max FROM ${table}
          WHERE company_id = $1 GROUP BY series`,
        [company.companyId],
      );
      for (const row of rows as Array<{ count: number; max: number }>) expect(row.max).toBe(row.count);
    }
  }

  it('keeps the books balanced and the numbering gapless for any mix of documents', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        await run(await t.newCompany(), steps);
      }),
      { seed: 20_261_130, numRuns: 25, endOnFailure: true },
    );
  }, 120_000);
});
