import { randomUUID } from 'node:crypto';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import { ReceiveProviderEventHandler } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { newKey } from '../support/invoice.builder';
import { eventually } from '../support/payment-books';
import { sampleValue } from '../support/prometheus';
import { GROSS, providerEventCalls, startProviderEventsRig } from '../support/provider-event-calls';
import { comparableBooksOf, type SandboxEvent, scrape } from '../support/provider-events';
import type { SandboxHttp } from '../support/provider-sandbox';
import { stopSandboxApp } from '../support/sandbox-app';
import type { TestApp, TestCompany } from '../support/test-app';

jest.setTimeout(60_000);

/**
 * The provider's webhooks, end to end (see provider-events.e2e-spec.ts): payout.paid, and the
 * reconciliation runs that find what no event brought.
 */
describe('provider events', () => {
  let sandbox: RunningProviderSandbox;
  let provider: SandboxHttp;
  let api: TestApp;
  let db: Pool;

  beforeAll(async () => {
    ({ sandbox, provider, api, db } = await startProviderEventsRig());
  });

  afterAll(async () => {
    await stopSandboxApp({ api, db });
  });

  const { deliver, anIssuedInvoice, aPayment, eventsOf, recorded, paymentOf } = providerEventCalls(() => ({
    sandbox,
    provider,
    api,
    db,
  }));

  describe('payout.paid', () => {
    async function payOut(company: TestCompany): Promise<{ id: string; feeAmount: number }> {
      const response = await provider.call('POST', '/v1/payouts', { body: { companyId: company.companyId } });
      expect(response.status).toBe(201);
      return (response.body as { data: Array<{ id: string; feeAmount: number }> }).data[0];
    }

    it('becomes one settlement from provider clearing; a pushed settlement of the payout then conflicts', async () => {
      const company = await api.newCompany();
      const first = await aPayment(company, 'pm_card_visa');
      await aPayment(company, 'pm_card_visa');
      const payout = await payOut(company);
      const [paid] = await eventsOf(company, 'payout.paid');

      expect((await deliver(paid)).body).toEqual({ duplicate: false, result: 'applied' });
      expect((await deliver(paid)).body).toEqual({ duplicate: true, result: 'duplicate' });

      const books = await comparableBooksOf(db, company.companyId);
      expect(books.settlements).toEqual([`${2 * GROSS} fee ${payout.feeAmount} provider`]);
      expect(books.paidTotals).toEqual([GROSS, GROSS]);
      expect(books.trialBalance).toEqual([
        `accounts_receivable ${2 * GROSS}/${2 * GROSS}`,
        `bank ${2 * GROSS - payout.feeAmount}/0`,
        `payment_fees ${payout.feeAmount}/0`,
        `provider_clearing ${2 * GROSS}/${2 * GROSS}`,
        'revenue 0/20000',
        'vat_payable 0/4200',
      ]);
      const pushed = await api.http
        .post('/v1/settlements/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey('settle'))
        .send({
          payoutId: payout.id,
          currency: 'EUR',
          paidAt: new Date().toISOString(),
          allocations: [{ invoiceId: first.invoiceId, amount: 1 }],
        });
      expect(pushed.status).toBe(409);
      expect(pushed.body).toMatchObject({
        code: 'payout_already_settled',
        existingSettlementId: expect.any(String),
      });
    });

    it('before its charges succeeded here it is parked, then applied by the retry once they have', async () => {
      const company = await api.newCompany();
      await aPayment(company, 'pm_card_lost_response');
      await payOut(company);
      const [succeeded] = await eventsOf(company, 'charge.succeeded');
      const [paid] = await eventsOf(company, 'payout.paid');

      const early = await deliver(paid);
      expect(early.body).toMatchObject({ duplicate: false, result: 'parked' });
      expect(await recorded(company)).toEqual([{ event_id: paid.id, status: 'parked' }]);
      // Parked means recorded: the provider's retry is a duplicate.
      expect((await deliver(paid)).body).toEqual({ duplicate: true, result: 'duplicate' });
      expect((await deliver(succeeded)).body).toMatchObject({ result: 'applied' });

      const receiver = api.app.get(ReceiveProviderEventHandler);
      await eventually(
        async () => {
          await receiver.retryParked();
          return recorded(company);
        },
        (rows) => rows.every((row) => row.status === 'applied'),
        10_000,
        150,
      );
      const books = await comparableBooksOf(db, company.companyId);
      expect(books.settlements).toHaveLength(1);
      expect(books.trialBalance).toContain(`provider_clearing ${GROSS}/${GROSS}`);
    });
    it('another currency or a fee above its total: recorded ignored with the reason, never a 5xx; zero-amount charges are left out', async () => {
      const company = await api.newCompany();
      await aPayment(company, 'pm_card_visa');
      await payOut(company);
      const [paid] = await eventsOf(company, 'payout.paid');
      const variant = (suffix: string, data: Record<string, unknown>): SandboxEvent => ({
        ...paid,
        id: `${paid.id}_${suffix}`,
        data: { ...paid.data, id: `${paid.data.id}_${suffix}`, ...data },
      });
      const inUsd = variant('usd', { currency: 'USD' });
      const feeAbove = variant('fee', { feeAmount: GROSS + 1 });
      const withZero = variant('zero', { charges: [...paid.data.charges, { id: 'ch_nothing', amount: 0 }] });

      const usd = await deliver(inUsd);
      expect(usd.status).toBe(200);
      expect(usd.body).toMatchObject({
        duplicate: false,
        result: 'ignored',
        reason: expect.stringMatching(/USD.*EUR/),
      });
      const fee = await deliver(feeAbove);
      expect(fee.status).toBe(200);
      expect(fee.body).toMatchObject({
        result: 'ignored',
        reason: expect.stringContaining(`fee of ${GROSS + 1}`),
      });
      // Recorded: the provider's redelivery is a duplicate, not a loop.
      expect((await deliver(inUsd)).body).toEqual({ duplicate: true, result: 'duplicate' });
      expect((await deliver(withZero)).body).toEqual({ duplicate: false, result: 'applied' });

      const statuses = new Map((await recorded(company)).map((row) => [row.event_id, row.status]));
      expect([statuses.get(inUsd.id), statuses.get(feeAbove.id), statuses.get(withZero.id)]).toEqual([
        'ignored',
        'ignored',
        'applied',
      ]);
      const books = await comparableBooksOf(db, company.companyId);
      expect(books.settlements).toEqual([`${GROSS} fee ${paid.data.feeAmount} provider`]);
      expect(books.paidTotals).toEqual([GROSS]);
    });
  });

  describe('reconciliation', () => {
    function runReconciliation(
      company: TestCompany,
      from: Date,
      to: Date,
      key = newKey('recon'),
    ): Promise<Response> {
      return api.http
        .post('/v1/reconciliation/runs/create')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send({ from: from.toISOString(), to: to.toISOString() });
    }

    it('finds planted discrepancies and classifies them; fixes the safe ones through the event paths', async () => {
      const company = await api.newCompany();
      const from = new Date(Date.now() - 60_000);
      // 1. A payment the provider charged but whose answer and event never arrived: processing here.
      const processing = await aPayment(company, 'pm_card_lost_response');
      // 2. A succeeded payment whose charge the sandbox then dropped.
      const dropped = await aPayment(company, 'pm_card_visa');
      await provider.call('DELETE', `/_sandbox/charges/${dropped.providerChargeId}`);
      // 3. A charge made behind ledgerkey's back, for this company.
      const planted = await provider.call('POST', '/_sandbox/charges', {
        body: {
          reference: `behind-${randomUUID()}`,
          amount: 777,
          currency: 'EUR',
          metadata: { companyId: company.companyId },
        },
      });
      expect(planted.status).toBe(201);
      // 4. A refund made at the provider whose event never arrived.
      const refunded = await aPayment(company, 'pm_card_visa');
      const refund = await provider.call('POST', `/v1/charges/${refunded.providerChargeId}/refunds`, {
        body: { amount: 100 },
        idempotencyKey: randomUUID(),
      });
      expect(refund.status).toBe(201);
      const to = new Date(Date.now() + 60_000);
      const key = newKey('recon');

      const response = await runReconciliation(company, from, to, key);

      expect(response.status).toBe(201);
      const run = response.body as {
        id: string;
        status: string;
        discrepancies: Array<Record<string, unknown>>;
        summary: Record<string, number>;
      };
      expect(run.status).toBe('completed');
      const byKind = run.discrepancies.map((d) => `${d.kind} ${d.objectType} ${d.resolution}`).sort();
      expect(byKind).toEqual(
        [
          'missing_at_provider charge needs_review',
          'missing_locally charge needs_review',
          'missing_locally refund auto_resolved',
          'status_mismatch charge auto_resolved',
        ].sort(),
      );
      expect(run.discrepancies).toContainEqual(
        expect.objectContaining({
          kind: 'missing_locally',
          providerObjectId: planted.body.id,
          localId: null,
        }),
      );
      expect(run.discrepancies).toContainEqual(
        expect.objectContaining({ kind: 'missing_at_provider', localId: dropped.id }),
      );
      expect(run.summary).toMatchObject({ autoResolved: 2, needsReview: 2 });
      expect(await paymentOf(company, processing.id)).toMatchObject({ status: 'succeeded' });
      expect((await comparableBooksOf(db, company.companyId)).refunds).toEqual([100]);

      const replay = await runReconciliation(company, from, to, key);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(response.text);
      const read = await api.http.get(`/v1/reconciliation/runs/${run.id}`).set(company.auth);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(run);

      // A second run finds only what needs a person; the fixed cases stay fixed.
      const again = await runReconciliation(company, from, to);
      const second = (again.body as typeof run).discrepancies;
      expect(second.map((d) => `${d.kind} ${d.resolution}`).sort()).toEqual([
        'missing_at_provider needs_review',
        'missing_locally needs_review',
      ]);
      const firstSeen = run.discrepancies.find((d) => d.kind === 'missing_at_provider')?.firstSeenAt;
      expect(second.find((d) => d.kind === 'missing_at_provider')?.firstSeenAt).toBe(firstSeen);

      const metrics = await scrape(api.baseUrl);
      expect(
        sampleValue(metrics, 'ledgerkey_reconciliation_open_discrepancies', { kind: 'missing_locally' }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        sampleValue(metrics, 'ledgerkey_reconciliation_oldest_open_discrepancy_age_seconds', {}),
      ).toBeGreaterThan(0);
    });

    it('imports a payout whose event never arrived; a matching books report nothing', async () => {
      const company = await api.newCompany();
      const from = new Date(Date.now() - 60_000);
      await aPayment(company, 'pm_card_visa');
      const payout = await provider.call('POST', '/v1/payouts', { body: { companyId: company.companyId } });
      expect(payout.status).toBe(201);
      const to = new Date(Date.now() + 60_000);

      const first = await runReconciliation(company, from, to);
      expect((first.body as { discrepancies: unknown[] }).discrepancies).toEqual([
        expect.objectContaining({
          kind: 'missing_locally',
          objectType: 'payout',
          resolution: 'auto_resolved',
        }),
      ]);
      expect((await comparableBooksOf(db, company.companyId)).settlements).toHaveLength(1);
      // The late event finds the payout settled: recorded, nothing booked twice.
      const [paid] = await eventsOf(company, 'payout.paid');
      expect((await deliver(paid)).body).toMatchObject({ result: 'applied' });
      expect((await comparableBooksOf(db, company.companyId)).settlements).toHaveLength(1);

      const second = await runReconciliation(company, from, to);
      expect(second.status).toBe(201);
      expect(second.body).toMatchObject({ status: 'completed', discrepancies: [] });
    });

    it('a pushed settlement of a payout that pays out payments here is reported, not booked twice', async () => {
      const company = await api.newCompany();
      const from = new Date(Date.now() - 60_000);
      await aPayment(company, 'pm_card_visa');
      const other = await anIssuedInvoice(company);
      const created = await provider.call('POST', '/v1/payouts', { body: { companyId: company.companyId } });
      expect(created.status).toBe(201);
      const payout = (created.body as { data: Array<{ id: string; feeAmount: number }> }).data[0];
      const to = new Date(Date.now() + 60_000);
      // The payout's money pushed as well: the payment raised its invoice's paid total already.
      const pushed = await api.http
        .post('/v1/settlements/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey('settle'))
        .send({
          payoutId: payout.id,
          currency: 'EUR',
          paidAt: new Date().toISOString(),
          feeAmount: payout.feeAmount,
          allocations: [{ invoiceId: other, amount: GROSS }],
        });
      expect(pushed.status).toBe(201);
      const settlementId = (pushed.body as { id: string }).id;

      const [paid] = await eventsOf(company, 'payout.paid');
      const received = await deliver(paid);
      expect(received.status).toBe(200);
      expect(received.body).toMatchObject({
        duplicate: false,
        result: 'ignored',
        reason: expect.stringContaining(settlementId),
      });
      expect(await recorded(company)).toEqual([{ event_id: paid.id, status: 'ignored' }]);

      const run = await runReconciliation(company, from, to);
      expect(run.status).toBe(201);
      expect((run.body as { discrepancies: unknown[] }).discrepancies).toEqual([
        expect.objectContaining({
          kind: 'status_mismatch',
          resolution: 'needs_review',
          objectType: 'payout',
          providerObjectId: payout.id,
          localId: settlementId,
        }),
      ]);
      expect((await comparableBooksOf(db, company.companyId)).settlements).toHaveLength(1);
    });

    it('refuses a bad range; an unknown run is 404', async () => {
      const company = await api.newCompany();
      const backwards = await runReconciliation(company, new Date(), new Date(Date.now() - 1000));
      expect(backwards.status).toBe(400);
      expect(backwards.body).toMatchObject({ code: 'validation_failed' });
      const missing = await api.http.get(`/v1/reconciliation/runs/${randomUUID()}`).set(company.auth);
      expect(missing.status).toBe(404);
    });
  });
});
