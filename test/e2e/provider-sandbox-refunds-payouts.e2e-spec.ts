import type { RunningProviderSandbox } from '@ledgerkey/payments';
import {
  aSandboxCharge,
  eventually,
  SandboxHttp,
  startTestSandbox,
  stopAllSandboxes,
} from '../support/provider-sandbox';

jest.setTimeout(60_000);

afterAll(stopAllSandboxes);

describe('provider sandbox: charges', () => {
  let sandbox: RunningProviderSandbox;
  let http: SandboxHttp;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    http = new SandboxHttp(sandbox);
  });

  describe('refunds', () => {
    it('refunds part, then the rest: refundedAmount grows, the charge becomes refunded; replays and limits hold', async () => {
      const { body: charge } = await http.createCharge(aSandboxCharge({ amount: 1000 }));
      const refundPath = `/v1/charges/${charge.id}/refunds`;
      const part = await http.call('POST', refundPath, { body: { amount: 300 }, idempotencyKey: 'refund-a' });
      expect(part.status).toBe(201);
      expect(part.body.refund).toEqual({
        id: expect.stringMatching(/^re_/),
        chargeId: charge.id,
        amount: 300,
        createdAt: expect.any(String),
      });
      expect(part.body.charge).toMatchObject({ status: 'succeeded', refundedAmount: 300 });
      const replay = await http.call('POST', refundPath, {
        body: { amount: 300 },
        idempotencyKey: 'refund-a',
      });
      expect(replay.body).toEqual(part.body);
      const tooMuch = await http.call('POST', refundPath, {
        body: { amount: 701 },
        idempotencyKey: 'refund-b',
      });
      expect(tooMuch.status).toBe(422);
      expect(tooMuch.body.error.code).toBe('refund_exceeds_charge');
      const rest = await http.call('POST', refundPath, { body: {}, idempotencyKey: 'refund-c' });
      expect(rest.status).toBe(201);
      expect(rest.body.refund.amount).toBe(700);
      expect(rest.body.charge).toMatchObject({ status: 'refunded', refundedAmount: 1000 });
      expect((await http.call('GET', `/v1/charges/${charge.id}`)).body.refunds).toHaveLength(2);
      const again = await http.call('POST', refundPath, { body: { amount: 1 }, idempotencyKey: 'refund-d' });
      expect(again.status).toBe(422);
      expect(again.body.error.code).toBe('charge_not_refundable');
    });

    it('refuses refunds of a failed charge and of an unknown one', async () => {
      const { body: declined } = await http.createCharge(
        aSandboxCharge({ paymentMethod: 'pm_card_declined' }),
      );
      const refused = await http.call('POST', `/v1/charges/${declined.id}/refunds`, {
        body: {},
        idempotencyKey: 'r1',
      });
      expect(refused.status).toBe(422);
      expect(refused.body.error.code).toBe('charge_not_refundable');
      const unknown = await http.call('POST', '/v1/charges/ch_nope/refunds', {
        body: {},
        idempotencyKey: 'r2',
      });
      expect(unknown.status).toBe(404);
    });
  });

  describe('payouts', () => {
    it('pays each company’s succeeded charges once, less refunds and the fee', async () => {
      const companyId = `company-payout-${Date.now()}`;
      const metadata = (paymentId: string): Record<string, string> => ({ companyId, paymentId });
      const { body: first } = await http.createCharge(
        aSandboxCharge({ amount: 1210, metadata: metadata('a') }),
      );
      const { body: second } = await http.createCharge(
        aSandboxCharge({ amount: 1000, metadata: metadata('b') }),
      );
      await http.call('POST', `/v1/charges/${second.id}/refunds`, {
        body: { amount: 200 },
        idempotencyKey: `${second.id}-r`,
      });
      await http.createCharge(aSandboxCharge({ paymentMethod: 'pm_card_declined', metadata: metadata('c') }));
      const { body: usd } = await http.createCharge(
        aSandboxCharge({ currency: 'USD', amount: 500, metadata: metadata('d') }),
      );

      const run = await http.call('POST', '/v1/payouts', { body: { companyId, currency: 'EUR' } });
      expect(run.status).toBe(201);
      expect(run.body.data).toHaveLength(1);
      const [payout] = run.body.data;
      // 1210 + 800 = 2010; fee 1.5 % = 30.15 → 30.
      expect(payout).toEqual({
        id: expect.stringMatching(/^po_/),
        companyId,
        currency: 'EUR',
        paidAt: expect.any(String),
        amount: 1980,
        feeAmount: 30,
        charges: [
          { id: first.id, amount: 1210 },
          { id: second.id, amount: 800 },
        ],
      });
      expect((await http.call('GET', `/v1/charges/${first.id}`)).body.payoutId).toBe(payout.id);
      expect((await http.call('GET', `/v1/payouts/${payout.id}`)).body).toEqual(payout);

      const again = await http.call('POST', '/v1/payouts', { body: { companyId, currency: 'EUR' } });
      expect(again.status).toBe(200);
      expect(again.body.data).toEqual([]);
      const dollars = await http.call('POST', '/v1/payouts', { body: { companyId } });
      expect(dollars.body.data.map((paid: { charges: unknown }) => paid.charges)).toEqual([
        [{ id: usd.id, amount: 500 }],
      ]);
      const listed = await http.call('GET', `/v1/payouts?companyId=${companyId}`);
      expect(listed.body.data.map((paid: { id: string }) => paid.id)).toEqual([
        payout.id,
        dollars.body.data[0].id,
      ]);
    });

    it('replays a payout run under the same Idempotency-Key', async () => {
      const companyId = `company-payout-key-${Date.now()}`;
      await http.createCharge(aSandboxCharge({ metadata: { companyId, paymentId: 'a' } }));
      const first = await http.call('POST', '/v1/payouts', {
        body: { companyId },
        idempotencyKey: `payout-${companyId}`,
      });
      const again = await http.call('POST', '/v1/payouts', {
        body: { companyId },
        idempotencyKey: `payout-${companyId}`,
      });
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });

    it('runs payouts on a schedule (PROVIDER_SANDBOX_PAYOUT_INTERVAL_MS)', async () => {
      const scheduled = await startTestSandbox({ env: { PROVIDER_SANDBOX_PAYOUT_INTERVAL_MS: '200' } });
      const scheduledHttp = new SandboxHttp(scheduled);
      const { body: charge } = await scheduledHttp.createCharge(aSandboxCharge());
      const payout = await eventually(async () => {
        const { body } = await scheduledHttp.call('GET', '/v1/payouts');
        return body.data[0] as { charges: Array<{ id: string }> } | undefined;
      });
      expect(payout.charges).toEqual([{ id: charge.id, amount: 1210 }]);
      await scheduled.stop();
    });
  });

  describe('admin (/_sandbox)', () => {
    it('plants a charge behind the merchant’s back and drops one, as reconciliation tests need', async () => {
      const planted = await http.call('POST', '/_sandbox/charges', {
        body: {
          reference: 'outside-ledgerkey',
          amount: 777,
          currency: 'EUR',
          metadata: { companyId: 'company-1' },
          createdAt: '2026-01-15T10:00:00Z',
        },
      });
      expect(planted.status).toBe(201);
      expect(planted.body).toMatchObject({ status: 'succeeded', createdAt: '2026-01-15T10:00:00.000Z' });
      const inJanuary = await http.call(
        'GET',
        '/v1/charges?createdFrom=2026-01-01T00:00:00Z&createdTo=2026-02-01T00:00:00Z',
      );
      expect(inJanuary.body.data.map((charge: { id: string }) => charge.id)).toContain(planted.body.id);

      const params = aSandboxCharge();
      const { body: charge } = await http.createCharge(params);
      const dropped = await http.call('DELETE', `/_sandbox/charges/${charge.id}`);
      expect(dropped.body).toEqual({ id: charge.id, dropped: true });
      expect((await http.call('GET', `/v1/charges/${charge.id}`)).status).toBe(404);
      expect((await http.call('GET', `/v1/charges?reference=${params.reference}`)).body.data).toEqual([]);
      expect(await http.chargesWithReference(params.reference)).toBe(1);
      const counters = await http.call('GET', '/_sandbox/counters');
      expect(counters.body.charges.dropped).toBeGreaterThanOrEqual(1);
    });

    it('sets the fault mix at run time, strictly', async () => {
      const set = await http.call('PUT', '/_sandbox/faults', { body: { faults: 'error=1', seed: 5 } });
      expect(set.status).toBe(200);
      expect(set.body).toMatchObject({ faults: 'error=1', seed: 5 });
      try {
        const params = aSandboxCharge();
        const failed = await http.createCharge(params);
        expect(failed.status).toBe(500);
        expect(await http.chargesWithReference(params.reference)).toBe(0);
        await http.call('PUT', '/_sandbox/faults', { body: { faults: 'lost_response=1' } });
        await expect(http.createCharge(params)).rejects.toThrow('fetch failed');
        expect(await http.chargesWithReference(params.reference)).toBe(1);
        const bad = await http.call('PUT', '/_sandbox/faults', { body: { faults: 'error=0.5,timeout=0.6' } });
        expect(bad.status).toBe(400);
        expect(bad.body.error).toMatchObject({
          param: 'faults',
          message: expect.stringContaining('must not exceed 1'),
        });
      } finally {
        await http.call('PUT', '/_sandbox/faults', { body: { faults: '' } });
      }
      expect((await http.call('GET', '/_sandbox/faults')).body.faults).toBe('');
    });

    it('resets to empty', async () => {
      const own = await startTestSandbox();
      const ownHttp = new SandboxHttp(own);
      await ownHttp.createCharge(aSandboxCharge());
      expect((await ownHttp.call('POST', '/_sandbox/reset')).status).toBe(200);
      expect((await ownHttp.call('GET', '/v1/charges')).body.data).toEqual([]);
      expect((await ownHttp.call('GET', '/_sandbox/counters')).body.charges.total).toBe(0);
      await own.stop();
    });
  });
});
