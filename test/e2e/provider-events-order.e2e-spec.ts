import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { ReceiveProviderEventHandler, type RunningProviderSandbox } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { eventually, paymentEnv } from '../support/payment-books';
import {
  type ComparableBooks,
  comparableBooksOf,
  eventBody,
  type SandboxEvent,
  sandboxEventsOf,
  signedHeaders,
} from '../support/provider-events';
import { SandboxHttp, startTestSandbox, stopAllSandboxes } from '../support/provider-sandbox';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

jest.setTimeout(300_000);

/** The default invoice builder line: 2 × 50.00 at 21 % → gross 12100. */
const GROSS = 12_100;
/** Fixed: a failure names its seed and path, and a re-run replays it. */
const SEED = 130_013;

type Operation = { kind: 'pay' } | { kind: 'refund'; payment: number; amount: number } | { kind: 'payout' };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Operation>({ kind: 'pay' }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      payment: fc.nat({ max: 20 }),
      amount: fc.integer({ min: 1, max: 6000 }),
    }),
  },
  { weight: 2, arbitrary: fc.constant<Operation>({ kind: 'payout' }) },
);

/**
 * Order does not matter: a random interleaving of payments, refunds and payouts is made at the
 * provider sandbox twice, for two companies; the first company gets its events once, in the order
 * the provider made them; the second gets each event one to three times, all shuffled (payouts
 * before their charges, refunds before the success, repeats after everything). Once parked events
 * are retried, both companies' books are the same: trial balance, paid totals, settlements,
 * refunds, payment outcomes.
 */
describe('provider events in any order and any number of copies end in the same books (property)', () => {
  let sandbox: RunningProviderSandbox;
  let provider: SandboxHttp;
  let api: TestApp;
  let db: Pool;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    provider = new SandboxHttp(sandbox);
    api = await startTestApp({
      ...paymentEnv(sandbox),
      PAYMENT_PROVIDER_WEBHOOK_SECRET: sandbox.webhookSecret,
      PAYMENT_RECOVERY_INTERVAL_MS: '100',
    });
    db = testDatabasePool();
  });

  afterAll(async () => {
    await api?.close();
    await db?.end();
    await stopAllSandboxes();
  });

  /** Makes the operations at the provider for `company`; payments stay processing here. */
  async function enact(company: TestCompany, operations: Operation[]): Promise<void> {
    const charges: Array<{ id: string; left: number }> = [];
    for (const op of operations) {
      if (op.kind === 'pay') {
        const invoice = await api.http
          .post('/v1/sales/invoices/create')
          .set(company.auth)
          .set('Idempotency-Key', newKey('invoice'))
          .send(anInvoice().build());
        const payment = await api.http
          .post('/v1/payments/create')
          .set(company.auth)
          .set('Idempotency-Key', newKey('pay'))
          .send({ invoiceId: (invoice.body as { id: string }).id, paymentMethod: 'pm_card_lost_response' });
        expect(payment.status).toBe(202);
        const reference = (payment.body as { providerReference: string }).providerReference;
        const found = await provider.call('GET', `/v1/charges?reference=${encodeURIComponent(reference)}`);
        charges.push({ id: (found.body as { data: Array<{ id: string }> }).data[0].id, left: GROSS });
      } else if (op.kind === 'refund') {
        const charge = charges.length === 0 ? undefined : charges[op.payment % charges.length];
        if (charge === undefined || charge.left < op.amount) continue;
        const refund = await provider.call('POST', `/v1/charges/${charge.id}/refunds`, {
          body: { amount: op.amount },
          idempotencyKey: randomUUID(),
        });
        expect(refund.status).toBe(201);
        charge.left -= op.amount;
      } else {
        const payout = await provider.call('POST', '/v1/payouts', { body: { companyId: company.companyId } });
        expect([200, 201]).toContain(payout.status);
      }
    }
  }

  /** Receipts of the shuffled deliveries over all runs, by result. */
  const seen: Record<string, number> = {};

  async function deliver(event: SandboxEvent, count = false): Promise<void> {
    const body = eventBody(event);
    const response = await api.http
      .post('/v1/providers/sandbox/events')
      .set(signedHeaders(sandbox.webhookSecret, event.id, body))
      .send(body);
    expect(response.status).toBe(200);
    const { result } = response.body as { result: string };
    if (count) seen[result] = (seen[result] ?? 0) + 1;
  }

  /** Retries parked events until none of the company's is left. */
  async function settled(company: TestCompany): Promise<ComparableBooks> {
    const receiver = api.app.get(ReceiveProviderEventHandler);
    await eventually(
      async () => {
        await receiver.retryParked();
        const { rows } = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM provider_events WHERE company_id = $1 AND status <> 'applied'`,
          [company.companyId],
        );
        return rows[0].n;
      },
      (left) => left === 0,
      30_000,
      150,
    );
    return comparableBooksOf(db, company.companyId);
  }

  it('matches delivery once in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 3, maxLength: 10 }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 40, maxLength: 40 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 120, maxLength: 120 }),
        async (operations, copies, order) => {
          const inOrder = await api.newCompany();
          const shuffled = await api.newCompany();
          await enact(inOrder, operations);
          await enact(shuffled, operations);

          for (const event of await sandboxEventsOf(provider, inOrder.companyId)) await deliver(event);
          const deliveries = (await sandboxEventsOf(provider, shuffled.companyId)).flatMap((event, index) =>
            Array<SandboxEvent>(copies[index % copies.length]).fill(event),
          );
          const ranked = deliveries
            .map((event, index) => ({ event, rank: order[index % order.length] + index * 1e-9 }))
            .sort((a, b) => a.rank - b.rank);
          for (const { event } of ranked) await deliver(event, true);

          const expected = await settled(inOrder);
          const actual = await settled(shuffled);
          expect(actual).toEqual(expected);
          // And the books are the provider's: every payment succeeded, balanced, refunds as made.
          expect(expected.payments.every((line) => line.endsWith('succeeded'))).toBe(true);
          expect(expected.paidTotals).toHaveLength(operations.filter((op) => op.kind === 'pay').length);
        },
      ),
      { seed: SEED, numRuns: 12, endOnFailure: true },
    );
    // The runs met what the property is about: repeats, and events before what they need.
    expect(seen).toMatchObject({ applied: expect.any(Number), duplicate: expect.any(Number) });
    expect(seen.parked ?? 0).toBeGreaterThan(0);
  });
});
