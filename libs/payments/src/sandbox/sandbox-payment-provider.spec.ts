import type { ChargeRequest } from '../payment-provider';
import { PaymentProviderRequestError, PaymentProviderUnavailableError } from '../payment-provider.errors';
import { SandboxPaymentProvider } from './sandbox-payment-provider';

/**
 * Answers the sandbox cannot be made to give (429, a 503, an unreadable 2xx, a refused connection),
 * through a stand-in fetch. The real sandbox's answers are covered by
 * test/e2e/sandbox-payment-provider.e2e-spec.ts.
 */
const request: ChargeRequest = {
  reference: 'pay_1',
  amount: 1210,
  currency: 'EUR',
  paymentMethod: 'pm_card_visa',
  metadata: { companyId: 'c1', paymentId: 'p1' },
};
const options = { idempotencyKey: 'pay_1', timeoutMs: 200 };
const charge = {
  id: 'ch_1',
  reference: 'pay_1',
  amount: 1210,
  currency: 'EUR',
  status: 'succeeded',
  failureCode: null,
  refundedAmount: 0,
  refunds: [],
  metadata: request.metadata,
  payoutId: null,
  createdAt: '2026-12-01T00:00:00.000Z',
};

function answering(status: number, body: unknown): typeof fetch {
  return (async () =>
    new Response(typeof body === 'string' ? body : JSON.stringify(body), { status })) as typeof fetch;
}

const providerWith = (fetchStandIn: typeof fetch, pageSize?: number): SandboxPaymentProvider =>
  new SandboxPaymentProvider({
    baseUrl: 'http://sandbox.test/',
    apiKey: 'sk_test',
    fetch: fetchStandIn,
    pageSize,
  });

const problem = (code: string) => ({ error: { type: 'x', code, message: `${code} happened` } });

describe('SandboxPaymentProvider classification', () => {
  it('sends the charge with its idempotency key and API key', async () => {
    const sent: Array<{ url: string; init: RequestInit }> = [];
    const provider = providerWith((async (url: string, init: RequestInit) => {
      sent.push({ url, init });
      return new Response(JSON.stringify(charge), { status: 201 });
    }) as typeof fetch);
    expect(await provider.createCharge(request, options)).toEqual({ kind: 'succeeded', charge });
    expect(sent[0].url).toBe('http://sandbox.test/v1/charges');
    expect(sent[0].init.headers).toMatchObject({
      authorization: 'Bearer sk_test',
      'idempotency-key': 'pay_1',
    });
    expect(JSON.parse(sent[0].init.body as string)).toEqual(request);
  });

  it('treats a refunded charge as a success and a failed one as failed', async () => {
    expect(
      await providerWith(answering(201, { ...charge, status: 'refunded' })).createCharge(request, options),
    ).toMatchObject({
      kind: 'succeeded',
    });
    expect(
      await providerWith(
        answering(201, { ...charge, status: 'failed', failureCode: 'card_declined' }),
      ).createCharge(request, options),
    ).toMatchObject({ kind: 'failed', failureCode: 'card_declined' });
  });

  it.each([
    [503, problem('unavailable'), 'server_error'],
    [500, 'gateway exploded', 'server_error'],
    [409, problem('idempotency_key_in_use'), 'in_progress'],
    [401, problem('unauthorized'), 'not_authorized'],
    [403, problem('forbidden'), 'not_authorized'],
    [429, problem('rate_limited'), 'rate_limited'],
    [201, { id: 'ch_1' }, 'unreadable_answer'],
    [200, 'not json', 'unreadable_answer'],
    [302, '', 'unreadable_answer'],
  ])('answers %s %j as unknown (%s): the charge may exist', async (status, body, reason) => {
    expect(await providerWith(answering(status, body)).createCharge(request, options)).toMatchObject({
      kind: 'unknown',
      reason,
    });
  });

  it.each([
    [400, 'payment_method_unknown'],
    [409, 'some_conflict'],
    [422, 'idempotency_key_reused'],
  ])('answers a %s %s as rejected: this request charged nothing', async (status, code) => {
    expect(await providerWith(answering(status, problem(code))).createCharge(request, options)).toEqual({
      kind: 'rejected',
      status,
      code,
      message: `${code} happened`,
    });
  });

  it('answers a failed connection as unknown (no_answer), never as a failure', async () => {
    const refused = (async () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    }) as typeof fetch;
    expect(await providerWith(refused).createCharge(request, options)).toEqual({
      kind: 'unknown',
      reason: 'no_answer',
      detail: 'fetch failed: ECONNREFUSED',
    });
  });

  it('answers no complete answer within timeoutMs as unknown (timeout), the body included', async () => {
    const slowBody = (async (_url: string, init: RequestInit) =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"id":'));
            init.signal?.addEventListener('abort', () => controller.error(init.signal?.reason));
          },
        }),
        { status: 201 },
      )) as typeof fetch;
    const startedAt = Date.now();
    expect(await providerWith(slowBody).createCharge(request, options)).toMatchObject({
      kind: 'unknown',
      reason: 'timeout',
    });
    expect(Date.now() - startedAt).toBeLessThan(2000);
  });

  it('throws on reads without a usable answer, and for a refused read', async () => {
    await expect(
      providerWith(answering(503, problem('x'))).findChargeByReference('pay_1'),
    ).rejects.toMatchObject({
      code: 'payment_provider_unavailable',
      reason: 'server_error',
    });
    await expect(providerWith(answering(200, 'nope')).findChargeByReference('pay_1')).rejects.toBeInstanceOf(
      PaymentProviderUnavailableError,
    );
    await expect(
      providerWith(answering(400, problem('parameter_invalid'))).findChargeByReference('x'),
    ).rejects.toBeInstanceOf(PaymentProviderRequestError);
  });

  it('walks the pages of a list with startingAfter', async () => {
    const urls: string[] = [];
    const pages = [
      { data: [{ id: 'ch_1' }, { id: 'ch_2' }], hasMore: true },
      { data: [{ id: 'ch_3' }], hasMore: false },
    ];
    const provider = providerWith(
      (async (url: string) => {
        urls.push(url);
        return new Response(JSON.stringify(pages[urls.length - 1]), { status: 200 });
      }) as typeof fetch,
      2,
    );
    const ids = [];
    const range = {
      createdFrom: new Date('2026-11-01T00:00:00Z'),
      createdTo: new Date('2026-12-01T00:00:00Z'),
      companyId: 'c1',
    };
    for await (const item of provider.listCharges(range)) ids.push(item.id);
    expect(ids).toEqual(['ch_1', 'ch_2', 'ch_3']);
    const queries = urls.map((url) => Object.fromEntries(new URL(url).searchParams));
    expect(queries[0]).toEqual({
      createdFrom: '2026-11-01T00:00:00.000Z',
      createdTo: '2026-12-01T00:00:00.000Z',
      limit: '2',
      companyId: 'c1',
    });
    expect(queries[1].startingAfter).toBe('ch_2');
  });
});
