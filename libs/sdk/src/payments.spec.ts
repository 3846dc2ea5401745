import { LedgerkeyApiError } from './ledgerkey-api-error';
import { LedgerkeyClient, type LedgerkeyClientOptions } from './ledgerkey-client';
import { PaymentStillProcessingError, pollDelayMs } from './payments';

const PAYMENT_ID = '5f0c9e1d-2b3a-4c5d-8e7f-80911a2b3c4d';
const body = { invoiceId: '9b2e4c1a-5d3f-4e8a-9c7b-1f2e3d4c5b6a', paymentMethod: 'pm_card_timeout' };

function payment(status: 'processing' | 'succeeded' | 'failed') {
  return {
    id: PAYMENT_ID,
    object: 'payment',
    invoiceId: body.invoiceId,
    amount: 12100,
    currency: 'EUR',
    status,
    failureCode: status === 'failed' ? 'card_declined' : null,
    provider: 'sandbox',
    providerReference: `lkpay_${PAYMENT_ID}`,
    providerChargeId: status === 'processing' ? null : 'ch_1',
    createdAt: '2026-12-01T10:00:00.000Z',
    updatedAt: '2026-12-01T10:00:00.000Z',
  };
}

function processing(retryAfter = '1'): Response {
  return Response.json(payment('processing'), {
    status: 202,
    headers: { Location: `/v1/payments/${PAYMENT_ID}`, 'Retry-After': retryAfter },
  });
}

function final(status: 'succeeded' | 'failed', replayed = false): Response {
  return Response.json(payment(status), {
    status: 201,
    headers: replayed ? { 'Idempotent-Replayed': 'true' } : {},
  });
}

interface Seen {
  method: string;
  url: string;
  idempotencyKey: string | null;
  body: string;
}

/** A client on a scripted fetch and a fake clock that the fake sleep advances. */
function harness(steps: Array<Response | Error>, options: Partial<LedgerkeyClientOptions> = {}) {
  const seen: Seen[] = [];
  const sleeps: number[] = [];
  let clock = 1_000_000;
  const fakeFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    seen.push({
      method: request.method,
      url: request.url,
      idempotencyKey: request.headers.get('idempotency-key'),
      body: await request.text(),
    });
    const step = steps.shift();
    if (step === undefined) throw new Error('no more scripted steps');
    if (step instanceof Error) throw step;
    return step;
  };
  const client = new LedgerkeyClient({
    baseUrl: 'http://ledgerkey.test',
    apiKey: 'lk_test',
    fetch: fakeFetch as typeof fetch,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
    random: () => 0.5,
    now: () => clock,
    ...options,
  });
  return { client, seen, sleeps };
}

describe('payments.create', () => {
  it('201 succeeded → final, typed as a final payment', async () => {
    const { client, seen } = harness([final('succeeded')]);

    const result = await client.payments.create(body, { idempotencyKey: 'pay-1' });

    expect(result).toMatchObject({ final: true, status: 201, idempotencyKey: 'pay-1' });
    expect(result.data.status).toBe('succeeded');
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: 'http://ledgerkey.test/v1/payments/create',
      idempotencyKey: 'pay-1',
    });
  });

  it('201 failed (a decline) is final too, not an error', async () => {
    const { client } = harness([final('failed')]);
    const result = await client.payments.create(body);
    expect(result).toMatchObject({ final: true, data: { status: 'failed', failureCode: 'card_declined' } });
  });

  it('202 processing → not final, with Retry-After and Location, and no retry of its own', async () => {
    const { client, seen, sleeps } = harness([processing('3')]);

    const result = await client.payments.create(body, { idempotencyKey: 'pay-2' });

    expect(result.final).toBe(false);
    if (result.final) throw new Error('unreachable');
    expect(result).toMatchObject({
      status: 202,
      retryAfterMs: 3_000,
      location: `/v1/payments/${PAYMENT_ID}`,
      data: { status: 'processing' },
    });
    expect(seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });
});

describe('payments.createAndWait', () => {
  it('re-sends the same body with the same key until the answer is final, honouring Retry-After', async () => {
    const { client, seen, sleeps } = harness([processing('2'), processing('1'), final('succeeded', true)]);
    const keys: string[] = [];

    const result = await client.payments.createAndWait(body, {
      onKey: (key) => {
        keys.push(key);
      },
      pollIntervalMs: 500,
    });

    expect(keys).toHaveLength(1);
    expect(seen.map((request) => request.idempotencyKey)).toEqual([keys[0], keys[0], keys[0]]);
    expect(new Set(seen.map((request) => request.body))).toEqual(new Set([JSON.stringify(body)]));
    // Round 0: max(Retry-After 2 s, 500 · 75 %); round 1: max(1 s, 1000 · 75 %).
    expect(sleeps).toEqual([2_000, 1_000]);
    expect(result).toMatchObject({
      final: true,
      replayed: true,
      idempotencyKey: keys[0],
      attempts: 3,
      data: { id: PAYMENT_ID, status: 'succeeded' },
    });
  });

  it('returns at once when the first answer is final', async () => {
    const { client, seen, sleeps } = harness([final('failed')]);
    await expect(client.payments.createAndWait(body)).resolves.toMatchObject({
      final: true,
      data: { status: 'failed' },
    });
    expect(seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('rides out an in-flight key (409) between rounds: the retry loop waits and sends the key again', async () => {
    const inUse = new Response(
      JSON.stringify({ code: 'idempotency_key_in_use', status: 409, detail: 'running' }),
      { status: 409, headers: { 'Content-Type': 'application/problem+json', 'Retry-After': '1' } },
    );
    const { client, seen } = harness([processing('1'), inUse, final('succeeded')]);

    const result = await client.payments.createAndWait(body, { idempotencyKey: 'pay-409' });

    expect(result.data.status).toBe('succeeded');
    expect(seen.map((request) => request.idempotencyKey)).toEqual(['pay-409', 'pay-409', 'pay-409']);
  });

  it('throws PaymentStillProcessingError with the payment and key once the deadline would pass', async () => {
    const { client, seen, sleeps } = harness(Array.from({ length: 10 }, () => processing('1')));

    const error = (await client.payments
      .createAndWait(body, {
        idempotencyKey: 'pay-slow',
        maxWaitMs: 10_000,
        pollIntervalMs: 2_000,
        maxPollIntervalMs: 4_000,
      })
      .catch((e: unknown) => e)) as PaymentStillProcessingError;

    expect(error).toBeInstanceOf(PaymentStillProcessingError);
    expect(error).toMatchObject({ idempotencyKey: 'pay-slow', payment: { id: PAYMENT_ID } });
    // 1500 + 3000 + 3000 = 7500 waited; the next 3000 would pass the 10 s deadline.
    expect(sleeps).toEqual([1_500, 3_000, 3_000]);
    expect(seen).toHaveLength(4);
    expect(error.attempts).toBe(4);
  });

  it('passes refusals through as typed errors, without waiting', async () => {
    const refused = new Response(
      JSON.stringify({ code: 'amount_exceeds_outstanding', status: 422, detail: 'too much' }),
      { status: 422, headers: { 'Content-Type': 'application/problem+json' } },
    );
    const { client, sleeps } = harness([refused]);
    const error = (await client.payments.createAndWait(body).catch((e: unknown) => e)) as LedgerkeyApiError;
    expect(error).toBeInstanceOf(LedgerkeyApiError);
    expect(error.code).toBe('amount_exceeds_outstanding');
    expect(sleeps).toEqual([]);
  });

  it('stops waiting when the caller aborts', async () => {
    const controller = new AbortController();
    const { client, seen } = harness([processing('1'), final('succeeded')], {
      sleep: async () => controller.abort(new Error('shutting down')),
    });
    await expect(client.payments.createAndWait(body, { signal: controller.signal })).rejects.toThrow(
      'shutting down',
    );
    expect(seen).toHaveLength(1);
  });
});

describe('payments.waitForFinal', () => {
  it('polls GET /v1/payments/{id} with a growing pause until the payment is final', async () => {
    const { client, seen, sleeps } = harness([
      Response.json(payment('processing')),
      Response.json(payment('processing')),
      Response.json(payment('succeeded')),
    ]);

    const settled = await client.payments.waitForFinal(PAYMENT_ID, { pollIntervalMs: 1_000 });

    expect(settled.status).toBe('succeeded');
    expect(seen.map((request) => [request.method, request.url, request.idempotencyKey])).toEqual(
      Array.from({ length: 3 }, () => ['GET', `http://ledgerkey.test/v1/payments/${PAYMENT_ID}`, null]),
    );
    expect(sleeps).toEqual([750, 1_500]);
  });

  it('throws PaymentStillProcessingError at the deadline', async () => {
    const { client } = harness(Array.from({ length: 10 }, () => Response.json(payment('processing'))));
    await expect(
      client.payments.waitForFinal(PAYMENT_ID, { maxWaitMs: 3_000, pollIntervalMs: 1_000 }),
    ).rejects.toBeInstanceOf(PaymentStillProcessingError);
  });
});

describe('pollDelayMs', () => {
  it('doubles up to the cap, jittered within [50 %, 100 %], never below Retry-After', () => {
    const options = { pollIntervalMs: 100, maxPollIntervalMs: 1_000 };
    expect([0, 1, 2, 3, 4, 5].map((poll) => pollDelayMs(poll, undefined, options, () => 0.999999))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(pollDelayMs(0, undefined, options, () => 0)).toBe(50);
    expect(pollDelayMs(10, 5_000, options, () => 0)).toBe(5_000);
    expect(pollDelayMs(1_000, undefined, undefined, () => 0.999999)).toBeLessThan(15_000);
  });
});
