import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import {
  aSandboxCharge,
  SandboxHttp,
  sandboxDataDir,
  startTestSandbox,
  stopAllSandboxes,
  TEST_TIMEOUT_HOLD_MS,
} from '../support/provider-sandbox';
import { WebhookReceiver } from '../support/webhook-receiver';

jest.setTimeout(60_000);

const ROOT = resolve(__dirname, '../..');
const WEBHOOK_SECRET = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;

/** Polls until `check` returns a value other than undefined. */
async function eventually<Value>(
  check: () => Promise<Value | undefined>,
  timeoutMs = 10_000,
): Promise<Value> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(50);
  }
}

async function allEventsDelivered(http: SandboxHttp): Promise<void> {
  await eventually(async () => {
    const { body } = await http.call('GET', '/_sandbox/counters');
    return body.events.pending === 0 ? true : undefined;
  });
}

/** Makes `count` charges, each after the previous one was answered; their references in order. */
async function chargeOneAfterAnother(http: SandboxHttp, count: number): Promise<string[]> {
  const references: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const params = aSandboxCharge();
    references.push(params.reference);
    await http.createCharge(params);
  }
  return references;
}

afterAll(stopAllSandboxes);

describe('provider sandbox: charges', () => {
  let sandbox: RunningProviderSandbox;
  let http: SandboxHttp;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    http = new SandboxHttp(sandbox);
  });

  it('answers the same charge for the same key and parameters, and makes one charge', async () => {
    const params = aSandboxCharge();
    const first = await http.createCharge(params);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^ch_[0-9a-f]{24}$/),
      reference: params.reference,
      amount: 1210,
      currency: 'EUR',
      paymentMethod: 'pm_card_visa',
      status: 'succeeded',
      failureCode: null,
      refundedAmount: 0,
      refunds: [],
      metadata: params.metadata,
      payoutId: null,
      createdAt: expect.any(String),
    });
    const again = await http.createCharge(params);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await http.chargesWithReference(params.reference)).toBe(1);
  });

  it('makes one charge for twenty concurrent requests with one key: each gets that charge or 409 in use', async () => {
    const params = aSandboxCharge();
    const answers = await Promise.all(Array.from({ length: 20 }, () => http.createCharge(params)));
    const created = answers.filter((answer) => answer.status === 201);
    const busy = answers.filter((answer) => answer.status === 409);
    expect(created.length + busy.length).toBe(20);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((answer) => answer.body.id)).size).toBe(1);
    for (const answer of busy) expect(answer.body.error.code).toBe('idempotency_key_in_use');
    expect(await http.chargesWithReference(params.reference)).toBe(1);
  });

  it('refuses a key reused with other parameters (422) and a request without a key (400), charging nothing more', async () => {
    const params = aSandboxCharge();
    await http.createCharge(params);
    const reused = await http.createCharge({ ...params, amount: 999 });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'idempotency_key_reused',
    });
    const other = aSandboxCharge();
    const keyless = await http.call('POST', '/v1/charges', { body: other });
    expect(keyless.status).toBe(400);
    expect(keyless.body.error.code).toBe('idempotency_key_missing');
    expect(await http.chargesWithReference(params.reference)).toBe(1);
    expect(await http.chargesWithReference(other.reference)).toBe(0);
  });

  it.each([
    [
      'an unknown payment method',
      { paymentMethod: 'pm_card_mastercard' },
      'payment_method_unknown',
      'paymentMethod',
    ],
    ['a zero amount', { amount: 0 }, 'parameter_invalid', 'amount'],
    ['an amount as a string', { amount: '1210' }, 'parameter_invalid', 'amount'],
    ['a bad currency', { currency: 'EURO' }, 'parameter_invalid', 'currency'],
    [
      'a non-string metadata value',
      { metadata: { companyId: 1 } },
      'parameter_invalid',
      'metadata.companyId',
    ],
    ['an unknown field', { description: 'x' }, 'parameter_invalid', 'description'],
  ])('refuses %s with 400 naming the parameter', async (_case, change, code, param) => {
    const params = { ...aSandboxCharge(), ...change };
    const answer = await http.call('POST', '/v1/charges', { body: params, idempotencyKey: params.reference });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code, param });
    expect(await http.chargesWithReference(params.reference)).toBe(0);
  });

  it('refuses malformed JSON, a wrong API key and unknown routes', async () => {
    const malformed = await fetch(`${sandbox.url}/v1/charges`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${sandbox.apiKey}`,
        'idempotency-key': 'k',
        'content-type': 'application/json',
      },
      body: '{"amount":',
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe('malformed_json');
    const wrongKey = await http.call('GET', '/v1/charges', { apiKey: 'sk_sandbox_wrong_key_0123456789' });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body.error.type).toBe('authentication_error');
    expect((await http.call('GET', '/v1/nothing')).status).toBe(404);
    expect((await fetch(`${sandbox.url}/health`)).status).toBe(200);
  });

  describe('magic payment methods', () => {
    it('pm_card_visa succeeds', async () => {
      const answer = await http.createCharge(aSandboxCharge({ paymentMethod: 'pm_card_visa' }));
      expect(answer.status).toBe(201);
      expect(answer.body).toMatchObject({ status: 'succeeded', failureCode: null });
    });

    it('pm_card_declined is a failed charge (201, a final outcome, replayed as such)', async () => {
      const params = aSandboxCharge({ paymentMethod: 'pm_card_declined' });
      const answer = await http.createCharge(params);
      expect(answer.status).toBe(201);
      expect(answer.body).toMatchObject({
        id: expect.stringMatching(/^ch_/),
        status: 'failed',
        failureCode: 'card_declined',
      });
      expect((await http.createCharge(params)).body).toEqual(answer.body);
      expect(await http.chargesWithReference(params.reference)).toBe(1);
    });

    it('pm_card_error answers 500 and charges nothing, on every attempt', async () => {
      const params = aSandboxCharge({ paymentMethod: 'pm_card_error' });
      for (let attempt = 0; attempt < 2; attempt += 1) {
        const answer = await http.createCharge(params);
        expect(answer.status).toBe(500);
        expect(answer.body.error).toMatchObject({ type: 'api_error', code: 'processing_error' });
      }
      expect(await http.chargesWithReference(params.reference)).toBe(0);
      expect((await http.call('GET', `/v1/charges?reference=${params.reference}`)).body.data).toEqual([]);
    });

    it('pm_card_lost_response charges, destroys the connection, and replays the charge on the retry', async () => {
      const params = aSandboxCharge({ paymentMethod: 'pm_card_lost_response' });
      await expect(http.createCharge(params)).rejects.toThrow('fetch failed');
      const found = await http.call('GET', `/v1/charges?reference=${params.reference}`);
      expect(found.body.data).toHaveLength(1);
      expect(found.body.data[0]).toMatchObject({ reference: params.reference, status: 'succeeded' });
      const retry = await http.createCharge(params);
      expect(retry.status).toBe(201);
      expect(retry.body.id).toBe(found.body.data[0].id);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(await http.chargesWithReference(params.reference)).toBe(1);
    });

    it('pm_card_timeout holds the request, then charges: meanwhile the key is in use and no charge exists', async () => {
      const params = aSandboxCharge({ paymentMethod: 'pm_card_timeout' });
      const startedAt = Date.now();
      await expect(
        http.call('POST', '/v1/charges', { body: params, idempotencyKey: params.reference, timeoutMs: 300 }),
      ).rejects.toThrow();
      expect((await http.call('GET', `/v1/charges?reference=${params.reference}`)).body.data).toEqual([]);
      const during = await http.createCharge(params);
      expect(during.status).toBe(409);
      expect(during.body.error.code).toBe('idempotency_key_in_use');
      const charge = await eventually(async () => {
        const { body } = await http.call('GET', `/v1/charges?reference=${params.reference}`);
        return body.data[0] as { id: string; createdAt: string } | undefined;
      });
      expect(Date.parse(charge.createdAt) - startedAt).toBeGreaterThanOrEqual(TEST_TIMEOUT_HOLD_MS - 50);
      const after = await http.createCharge(params);
      expect(after.status).toBe(201);
      expect(after.body.id).toBe(charge.id);
      expect(await http.chargesWithReference(params.reference)).toBe(1);
    });

    it('pm_card_timeout answers the charge to a client that waits out the hold', async () => {
      const startedAt = Date.now();
      const answer = await http.createCharge(aSandboxCharge({ paymentMethod: 'pm_card_timeout' }));
      expect(Date.now() - startedAt).toBeGreaterThanOrEqual(TEST_TIMEOUT_HOLD_MS - 50);
      expect(answer.status).toBe(201);
      expect(answer.body.status).toBe('succeeded');
    });
  });

  describe('lookup and lists', () => {
    it('finds a charge by reference or answers an empty list; gets it by id; 404 for an unknown id', async () => {
      const params = aSandboxCharge();
      const { body: charge } = await http.createCharge(params);
      expect((await http.call('GET', `/v1/charges?reference=${params.reference}`)).body).toEqual({
        data: [charge],
        hasMore: false,
      });
      expect((await http.call('GET', '/v1/charges?reference=pay_nobody')).body).toEqual({
        data: [],
        hasMore: false,
      });
      expect((await http.call('GET', `/v1/charges/${charge.id}`)).body).toEqual(charge);
      const missing = await http.call('GET', '/v1/charges/ch_000000000000000000000000');
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('resource_missing');
    });

    it('lists a company’s charges in a time range, page by page', async () => {
      const companyId = `company-${Date.now()}`;
      const from = new Date().toISOString();
      const ids: string[] = [];
      for (let index = 0; index < 5; index += 1) {
        ids.push(
          (await http.createCharge(aSandboxCharge({ metadata: { companyId, paymentId: `p${index}` } }))).body
            .id,
        );
      }
      const to = new Date(Date.now() + 1).toISOString();
      const listed: string[] = [];
      let query = `companyId=${companyId}&createdFrom=${from}&createdTo=${to}&limit=2`;
      for (;;) {
        const { status, body } = await http.call('GET', `/v1/charges?${query}`);
        expect(status).toBe(200);
        listed.push(...body.data.map((charge: { id: string }) => charge.id));
        if (!body.hasMore) break;
        query = `companyId=${companyId}&createdFrom=${from}&createdTo=${to}&limit=2&startingAfter=${listed[listed.length - 1]}`;
      }
      expect(listed).toEqual(ids);
      expect(
        (await http.call('GET', `/v1/charges?companyId=${companyId}&createdTo=${from}`)).body.data,
      ).toEqual([]);
      const bad = await http.call('GET', '/v1/charges?createdFrom=yesterday');
      expect(bad.status).toBe(400);
      expect(bad.body.error.param).toBe('createdFrom');
    });
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

describe('provider sandbox: webhooks', () => {
  let receiver: WebhookReceiver;
  afterEach(async () => {
    await receiver.close();
  });

  it('sends each event signed per Standard Webhooks, with exactly the documented body, in order', async () => {
    receiver = await WebhookReceiver.start();
    const sandbox = await startTestSandbox({ webhookUrl: receiver.url(), webhookSecret: WEBHOOK_SECRET });
    const http = new SandboxHttp(sandbox);
    const metadata = { companyId: 'company-hooks', paymentId: 'pay-1' };
    const { body: charge } = await http.createCharge(aSandboxCharge({ metadata }));
    await http.createCharge(aSandboxCharge({ paymentMethod: 'pm_card_declined', metadata }));
    await http.call('POST', `/v1/charges/${charge.id}/refunds`, {
      body: { amount: 10 },
      idempotencyKey: 'hook-refund',
    });
    const { body: payouts } = await http.call('POST', '/v1/payouts', {
      body: { companyId: 'company-hooks' },
    });
    await receiver.waitFor((requests) => requests.length >= 4, 10_000);

    const events = receiver.requests.map((request) => {
      const verified = new Webhook(WEBHOOK_SECRET).verify(request.body, request.headers) as { id: string };
      expect(request.headers['webhook-id']).toBe(verified.id);
      return JSON.parse(request.body) as {
        id: string;
        type: string;
        createdAt: string;
        data: Record<string, unknown>;
      };
    });
    expect(events.map((event) => event.type)).toEqual([
      'charge.succeeded',
      'charge.failed',
      'charge.refunded',
      'payout.paid',
    ]);
    for (const event of events)
      expect(Object.keys(event).sort()).toEqual(['createdAt', 'data', 'id', 'type']);
    expect(events[0].data).toEqual(charge);
    expect(events[1].data).toMatchObject({ status: 'failed', failureCode: 'card_declined', metadata });
    expect(events[2].data).toMatchObject({ id: charge.id, refundedAmount: 10, status: 'succeeded' });
    expect(events[3].data).toEqual(payouts.data[0]);
    expect(Object.keys(events[3].data).sort()).toEqual([
      'amount',
      'charges',
      'companyId',
      'currency',
      'feeAmount',
      'id',
      'paidAt',
    ]);
    await allEventsDelivered(http);
    await sandbox.stop();
  });

  it('retries an event with backoff until a 2xx, with the same id and body', async () => {
    receiver = await WebhookReceiver.start({ failFirst: 3 });
    const sandbox = await startTestSandbox({ webhookUrl: receiver.url(), webhookSecret: WEBHOOK_SECRET });
    const http = new SandboxHttp(sandbox);
    await http.createCharge(aSandboxCharge());
    await receiver.waitFor((requests) => requests.some((request) => request.answer === 200), 10_000);
    expect(receiver.requests.map((request) => request.answer)).toEqual([500, 500, 500, 200]);
    expect(new Set(receiver.requests.map((request) => request.headers['webhook-id'])).size).toBe(1);
    expect(new Set(receiver.requests.map((request) => request.body)).size).toBe(1);
    const gaps = receiver.requests
      .slice(1)
      .map((request, index) => request.receivedAt.getTime() - receiver.requests[index].receivedAt.getTime());
    expect(gaps[2]).toBeGreaterThan(gaps[0]);
    // The receiver answers before the sandbox records that answer.
    await allEventsDelivered(http);
    const { body } = await http.call('GET', '/_sandbox/events');
    expect(body.data[0]).toMatchObject({ attempts: 4, delivered: 1, copies: 1, lastError: null });
    await sandbox.stop();
  });

  it('delivers some events twice with duplicate_webhook, the same ones for the same seed', async () => {
    receiver = await WebhookReceiver.start();
    const deliveriesPerCharge = async (path: string): Promise<number[]> => {
      const sandbox = await startTestSandbox({
        webhookUrl: receiver.url(path),
        webhookSecret: WEBHOOK_SECRET,
        faults: 'duplicate_webhook=0.5',
        seed: 1234,
      });
      const http = new SandboxHttp(sandbox);
      const references = await chargeOneAfterAnother(http, 12);
      await allEventsDelivered(http);
      const { body: counters } = await http.call('GET', '/_sandbox/counters');
      const requests = receiver.requests.filter((request) => request.path === path);
      expect(requests).toHaveLength(12 + counters.faultsInjected.duplicateWebhook);
      const counts = references.map((reference) => {
        const copies = requests.filter((request) => JSON.parse(request.body).data.reference === reference);
        expect(new Set(copies.map((copy) => copy.headers['webhook-id'])).size).toBe(1);
        expect(new Set(copies.map((copy) => copy.body)).size).toBe(1);
        return copies.length;
      });
      await sandbox.stop();
      return counts;
    };
    const first = await deliveriesPerCharge('/first');
    expect(first).toContain(1);
    expect(first).toContain(2);
    expect(await deliveriesPerCharge('/second')).toEqual(first);
  });

  it('delivers events out of order with reorder_webhooks, each still delivered', async () => {
    receiver = await WebhookReceiver.start();
    const sandbox = await startTestSandbox({
      webhookUrl: receiver.url(),
      webhookSecret: WEBHOOK_SECRET,
      faults: 'reorder_webhooks=true,webhook_delay_ms=800',
      seed: 99,
    });
    const http = new SandboxHttp(sandbox);
    const references = await chargeOneAfterAnother(http, 10);
    await allEventsDelivered(http);
    const arrived = receiver.requests.map((request) => JSON.parse(request.body).data.reference as string);
    expect([...arrived].sort()).toEqual([...references].sort());
    expect(arrived).not.toEqual(references);
    await sandbox.stop();
  });
});

describe('provider sandbox: durable state', () => {
  it('keeps charges, keys, refunds, payouts, secrets and pending webhooks across a SIGKILL', async () => {
    const dataDir = await sandboxDataDir();
    const before = await startTestSandbox({ dataDir });
    const http = new SandboxHttp(before);
    const params = aSandboxCharge({ metadata: { companyId: 'company-durable', paymentId: 'p1' } });
    const { body: charge } = await http.createCharge(params);
    await http.call('POST', `/v1/charges/${charge.id}/refunds`, {
      body: { amount: 10 },
      idempotencyKey: 'durable-refund',
    });
    const { body: payouts } = await http.call('POST', '/v1/payouts', {
      body: { companyId: 'company-durable' },
    });
    expect((await before.kill('SIGKILL')).signal).toBe('SIGKILL');

    const receiver = await WebhookReceiver.start();
    try {
      const after = await startTestSandbox({ dataDir, webhookUrl: receiver.url() });
      expect(after.apiKey).toBe(before.apiKey);
      expect(after.webhookSecret).toBe(before.webhookSecret);
      const httpAfter = new SandboxHttp(after);
      const stored = (await httpAfter.call('GET', `/v1/charges/${charge.id}`)).body;
      expect(stored).toMatchObject({ id: charge.id, refundedAmount: 10, payoutId: payouts.data[0].id });
      const replay = await httpAfter.createCharge(params);
      expect(replay.body).toEqual(charge);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await httpAfter.chargesWithReference(params.reference)).toBe(1);
      expect((await httpAfter.call('GET', `/v1/payouts/${payouts.data[0].id}`)).body).toEqual(
        payouts.data[0],
      );
      // The events made before the kill, while no URL was set, are sent now, signed with the kept secret.
      await receiver.waitFor((requests) => requests.length >= 3, 10_000);
      for (const request of receiver.requests)
        new Webhook(after.webhookSecret).verify(request.body, request.headers);
      expect(receiver.requests.map((request) => JSON.parse(request.body).type)).toEqual([
        'charge.succeeded',
        'charge.refunded',
        'payout.paid',
      ]);
      await after.stop();
    } finally {
      await receiver.close();
    }
  });

  it('still holds every charge it answered when SIGKILLed in the middle of a burst', async () => {
    const dataDir = await sandboxDataDir();
    const sandbox = await startTestSandbox({ dataDir });
    const http = new SandboxHttp(sandbox);
    const answered: string[] = [];
    const burst = Array.from({ length: 40 }, async () => {
      const answer = await http.createCharge(aSandboxCharge()).catch(() => undefined);
      if (answer?.status === 201) answered.push(answer.body.id as string);
    });
    await eventually(async () => (answered.length >= 10 ? true : undefined));
    await sandbox.kill('SIGKILL');
    await Promise.all(burst);
    const restarted = new SandboxHttp(await startTestSandbox({ dataDir }));
    for (const id of answered) expect((await restarted.call('GET', `/v1/charges/${id}`)).status).toBe(200);
  });

  it('waits for a live sandbox on the same data dir, then refuses to start', async () => {
    const dataDir = await sandboxDataDir();
    const first = await startTestSandbox({ dataDir });
    await expect(
      startTestSandbox({ dataDir, env: { PROVIDER_SANDBOX_LOCK_WAIT_MS: '300' } }),
    ).rejects.toThrow(`is used by another provider sandbox (pid ${first.pid})`);
    await first.stop();
  });

  it('fails at boot naming a bad PROVIDER_SANDBOX_FAULTS', async () => {
    await expect(startTestSandbox({ faults: 'error=0.1,chaos=1' })).rejects.toThrow(
      'PROVIDER_SANDBOX_FAULTS: unknown fault "chaos"',
    );
  });

  it('stops with the process that started it (startProviderSandbox), SIGKILL included', async () => {
    const dataDir = await sandboxDataDir();
    const script = `require(${JSON.stringify(resolve(ROOT, 'dist/libs/payments/src/index.js'))})
      .startProviderSandbox({ dataDir: ${JSON.stringify(dataDir)} })
      .then((sandbox) => console.log('sandbox pid ' + sandbox.pid), (error) => { console.error(error); process.exit(1); });`;
    const parent = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolvePid, reject) => {
      parent.stdout.on('data', (chunk: Buffer) => {
        const match = /sandbox pid (\d+)/.exec(chunk.toString());
        if (match) resolvePid(Number(match[1]));
      });
      parent.once('exit', () => reject(new Error('the parent exited before the sandbox started')));
    });
    // Running, not a zombie (an orphan's reaper may be slow to collect it).
    const alive = (): boolean => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
      } catch {
        return false;
      }
    };
    expect(alive()).toBe(true);
    parent.kill('SIGKILL');
    await eventually(async () => (alive() ? undefined : true), 10_000);
    // It stopped cleanly: the data dir is free at once.
    const next = await startTestSandbox({ dataDir, env: { PROVIDER_SANDBOX_LOCK_WAIT_MS: '0' } });
    await next.stop();
  });
});
