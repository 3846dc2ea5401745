import { LedgerkeyApiError, LedgerkeyConnectionError } from './ledgerkey-api-error';
import { type CreateOptions, LedgerkeyClient, type LedgerkeyClientOptions } from './ledgerkey-client';
import { backoffDelayMs, DEFAULT_RETRY, parseRetryAfterMs } from './retry-policy';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const invoiceBody = {
  orderId: 'order-1041',
  customer: { name: 'UAB Pirkėjas', countryCode: 'LT' },
  lines: [{ description: 'Consulting', quantity: '2', unitPrice: 5000, vatRate: '21' }],
};

const invoice = { id: '9b2e4c1a-5d3f-4e8a-9c7b-1f2e3d4c5b6a', object: 'invoice', number: 'INV-000001' };

/** One scripted outcome per attempt: an answer, or an error thrown by fetch (a network failure). */
type Step = Response | Error | 'hang';

interface SeenRequest {
  method: string;
  url: string;
  idempotencyKey: string | null;
  authorization: string | null;
  body: string;
}

function created(headers: Record<string, string> = {}): Response {
  return Response.json(invoice, {
    status: 201,
    headers: {
      'X-Request-Id': 'req_1',
      'Idempotency-Key-Expires': 'Tue, 01 Dec 2026 12:00:00 GMT',
      ...headers,
    },
  });
}

function problem(status: number, code: string, headers: Record<string, string> = {}, extra = {}): Response {
  return new Response(
    JSON.stringify({
      type: `https://docs.ledgerkey.dev/errors/${code}`,
      title: code,
      status,
      detail: `detail of ${code}`,
      code,
      requestId: 'req_p',
      ...extra,
    }),
    { status, headers: { 'Content-Type': 'application/problem+json; charset=utf-8', ...headers } },
  );
}

function harness(steps: Step[], options: Partial<LedgerkeyClientOptions> = {}) {
  const seen: SeenRequest[] = [];
  const sleeps: number[] = [];
  const events: string[] = [];
  const fakeFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    seen.push({
      method: request.method,
      url: request.url,
      idempotencyKey: request.headers.get('idempotency-key'),
      authorization: request.headers.get('authorization'),
      body: await request.text(),
    });
    events.push('fetch');
    const step = steps.shift();
    if (step === undefined) throw new Error('no more scripted steps');
    if (step === 'hang') {
      return new Promise((_resolve, reject) =>
        request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }),
      );
    }
    if (step instanceof Error) throw step;
    return step;
  };
  const client = new LedgerkeyClient({
    baseUrl: 'http://ledgerkey.test/',
    apiKey: 'lk_test',
    fetch: fakeFetch as typeof fetch,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: () => 0.5,
    ...options,
  });
  const create = (options?: CreateOptions) =>
    client.salesInvoices.create(invoiceBody, {
      ...options,
      onKey: (key) => {
        events.push(`onKey ${key}`);
        return options?.onKey?.(key);
      },
    });
  return { client, seen, sleeps, events, create };
}

const networkError = () => new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });

describe('LedgerkeyClient create', () => {
  it('makes one UUID per logical call, hands it to onKey first and sends it on every attempt', async () => {
    const { seen, events, create } = harness([
      networkError(),
      problem(503, 'service_unavailable'),
      created(),
    ]);

    const result = await create();

    expect(result.idempotencyKey).toMatch(UUID);
    expect(seen.map((r) => r.idempotencyKey)).toEqual([
      result.idempotencyKey,
      result.idempotencyKey,
      result.idempotencyKey,
    ]);
    expect(events[0]).toBe(`onKey ${result.idempotencyKey}`);
    expect(events.filter((e) => e.startsWith('onKey'))).toHaveLength(1);
    expect(new Set(seen.map((r) => r.body)).size).toBe(1);
    expect(JSON.parse(seen[0].body)).toEqual(invoiceBody);
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: 'http://ledgerkey.test/v1/sales/invoices/create',
      authorization: 'Bearer lk_test',
    });
    expect(result).toMatchObject({
      data: invoice,
      replayed: false,
      status: 201,
      attempts: 3,
      requestId: 'req_1',
      keyExpiresAt: new Date('2026-12-01T12:00:00Z'),
    });
  });

  it('uses the caller key verbatim, and a new key for the next logical call', async () => {
    const { seen, create } = harness([created(), created()]);

    const first = await create({ idempotencyKey: 'order-1041-invoice' });
    const second = await create();

    expect(first.idempotencyKey).toBe('order-1041-invoice');
    expect(seen[0].idempotencyKey).toBe('order-1041-invoice');
    expect(second.idempotencyKey).toMatch(UUID);
    expect(second.idempotencyKey).not.toBe(first.idempotencyKey);
  });

  it('reports a replay', async () => {
    const { create } = harness([created({ 'Idempotent-Replayed': 'true' })]);
    await expect(create({ idempotencyKey: 'k' })).resolves.toMatchObject({ replayed: true, data: invoice });
  });

  it.each([
    [500, 'internal_error'],
    [502, undefined],
    [503, 'service_unavailable'],
    [504, undefined],
    [429, 'rate_limited'],
    [409, 'idempotency_key_in_use'],
  ])('retries %i %s with the same key', async (status, code) => {
    const answer = code
      ? problem(status, code)
      : new Response('<html>bad gateway</html>', { status, headers: { 'Content-Type': 'text/html' } });
    const { seen, create } = harness([answer, created()]);

    const result = await create({ idempotencyKey: 'k-retry' });

    expect(result.attempts).toBe(2);
    expect(seen.map((r) => r.idempotencyKey)).toEqual(['k-retry', 'k-retry']);
  });

  it.each([
    [400, 'validation_failed'],
    [400, 'idempotency_key_invalid'],
    [401, 'unauthorized'],
    [403, 'unauthorized'],
    [404, 'not_found'],
    [409, 'order_already_invoiced'],
    [422, 'idempotency_key_reused'],
    [422, 'due_date_before_issue_date'],
  ])('never retries %i %s and throws it as a typed error', async (status, code) => {
    const { seen, sleeps, create } = harness([problem(status, code, { 'X-Request-Id': 'req_h' }), created()]);

    const error = (await create({ idempotencyKey: 'k-final' }).catch((e: unknown) => e)) as LedgerkeyApiError;

    expect(error).toBeInstanceOf(LedgerkeyApiError);
    expect(error).toMatchObject({ status, code, detail: `detail of ${code}`, requestId: 'req_p' });
    expect(error.idempotencyKey).toBe('k-final');
    expect(error.attempts).toBe(1);
    expect(seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('carries the documented extension fields of a problem', async () => {
    const { create } = harness([
      problem(409, 'order_already_invoiced', {}, { existingInvoiceId: invoice.id }),
    ]);
    const error = (await create().catch((e: unknown) => e)) as LedgerkeyApiError;
    expect(error.problem.existingInvoiceId).toBe(invoice.id);
    expect(error.message).toBe('409 order_already_invoiced: detail of order_already_invoiced');
  });

  it('waits at least Retry-After (seconds or HTTP date) before retrying an in-flight key', async () => {
    const now = Date.now();
    const date = new Date(now + 4_000).toUTCString();
    const { sleeps, create } = harness([
      problem(409, 'idempotency_key_in_use', { 'Retry-After': '2' }),
      problem(429, 'rate_limited', { 'Retry-After': date }),
      created(),
    ]);

    await create();

    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(2_000);
    expect(sleeps[1]).toBeGreaterThanOrEqual(2_000);
    expect(sleeps[1]).toBeLessThanOrEqual(4_000);
  });

  it('gives up at once when Retry-After exceeds maxRetryAfterMs, saying when to come back', async () => {
    const { seen, create } = harness([problem(503, 'service_unavailable', { 'Retry-After': '120' })], {
      retry: { maxRetryAfterMs: 60_000 },
    });
    const error = (await create({ idempotencyKey: 'k' }).catch((e: unknown) => e)) as LedgerkeyApiError;
    expect(error).toMatchObject({ status: 503, retryAfterSeconds: 120, idempotencyKey: 'k' });
    expect(seen).toHaveLength(1);
  });

  it('backs off exponentially with full jitter up to the cap', async () => {
    const steps = Array.from({ length: 7 }, () => networkError());
    const { sleeps, create } = harness([...steps, created()], {
      random: () => 0.999,
      retry: { maxAttempts: 8, baseDelayMs: 100, maxDelayMs: 1_000 },
    });

    await create();

    expect(sleeps).toEqual([99, 199, 399, 799, 999, 999, 999]);
  });

  it('abandons an attempt after timeoutMs and retries it with the same key', async () => {
    const { seen, create } = harness(['hang', created()], { timeoutMs: 30 });
    const result = await create({ idempotencyKey: 'k-timeout' });
    expect(result.attempts).toBe(2);
    expect(seen.map((r) => r.idempotencyKey)).toEqual(['k-timeout', 'k-timeout']);
  });

  it('retries an answer cut off while its body was read', async () => {
    const cutOff = new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"id":"9b2e'));
          controller.error(new TypeError('terminated'));
        },
      }),
      { status: 201, headers: { 'Content-Type': 'application/json' } },
    );
    const { seen, create } = harness([cutOff, created({ 'Idempotent-Replayed': 'true' })]);

    const result = await create({ idempotencyKey: 'k-cut' });

    expect(result).toMatchObject({ replayed: true, attempts: 2, data: invoice });
    expect(seen).toHaveLength(2);
  });

  it('throws a connection error carrying the key when every attempt fails', async () => {
    const { seen, create } = harness([networkError(), networkError(), networkError()], {
      retry: { maxAttempts: 3 },
    });
    const error = (await create().catch((e: unknown) => e)) as LedgerkeyConnectionError;
    expect(error).toBeInstanceOf(LedgerkeyConnectionError);
    expect(error.idempotencyKey).toBe(seen[0].idempotencyKey);
    expect(error.attempts).toBe(3);
    expect(seen).toHaveLength(3);
  });

  it('sends nothing when onKey fails (the key could not be persisted)', async () => {
    const { seen, create } = harness([created()]);
    await expect(
      create({
        onKey: () => {
          throw new Error('disk full');
        },
      }),
    ).rejects.toThrow('disk full');
    expect(seen).toHaveLength(0);
  });

  it('stops retrying when the caller aborts', async () => {
    const controller = new AbortController();
    const { seen, create } = harness([networkError(), created()], {
      sleep: async () => controller.abort(new Error('shutting down')),
    });
    await expect(create({ signal: controller.signal })).rejects.toThrow('shutting down');
    expect(seen).toHaveLength(1);
  });
});

describe('LedgerkeyClient reads', () => {
  it('retries a GET on 5xx and returns the resource', async () => {
    const { client, seen } = harness([problem(500, 'internal_error'), Response.json(invoice)]);
    await expect(client.salesInvoices.get(invoice.id)).resolves.toEqual(invoice);
    expect(seen.map((r) => [r.method, r.url, r.idempotencyKey])).toEqual([
      ['GET', `http://ledgerkey.test/v1/sales/invoices/${invoice.id}`, null],
      ['GET', `http://ledgerkey.test/v1/sales/invoices/${invoice.id}`, null],
    ]);
  });

  it('sends list queries', async () => {
    const { client, seen } = harness([Response.json({ object: 'list', data: [], hasMore: false })]);
    await client.salesInvoices.list({ limit: 5, startingAfter: invoice.id });
    expect(seen[0].url).toBe(`http://ledgerkey.test/v1/sales/invoices?limit=5&startingAfter=${invoice.id}`);
  });
});

describe('retry policy', () => {
  it('parses Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfterMs('3')).toBe(3_000);
    expect(parseRetryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfterMs('soon')).toBeUndefined();
    expect(parseRetryAfterMs(null)).toBeUndefined();
  });

  it('never waits longer than the cap', () => {
    for (let retry = 0; retry < 40; retry += 1) {
      expect(backoffDelayMs(retry, DEFAULT_RETRY, () => 0.999999)).toBeLessThan(DEFAULT_RETRY.maxDelayMs);
    }
  });
});

describe('LedgerkeyClient under rate limits (429 rate_limited)', () => {
  const limited = (retryAfter?: string) =>
    problem(429, 'rate_limited', {
      'RateLimit-Limit': '200',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '2',
      ...(retryAfter === undefined ? {} : { 'Retry-After': retryAfter }),
    });

  it('backs off on a create for at least each Retry-After, with the same key, then returns the answer', async () => {
    const { seen, sleeps, create } = harness([limited('3'), limited('1'), created()]);

    const result = await create({ idempotencyKey: 'order-1041-invoice' });

    expect(result).toMatchObject({ status: 201, attempts: 3, data: invoice });
    expect(seen.map((r) => r.idempotencyKey)).toEqual(Array(3).fill('order-1041-invoice'));
    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(3_000);
    expect(sleeps[1]).toBeGreaterThanOrEqual(1_000);
  });

  it('backs off on a read for at least Retry-After', async () => {
    const { client, sleeps } = harness([limited('2'), Response.json(invoice)]);
    await expect(client.salesInvoices.get(invoice.id)).resolves.toEqual(invoice);
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(2_000);
  });

  it('without Retry-After, backs off exponentially with jitter', async () => {
    const { sleeps, create } = harness([limited(), limited(), created()], { random: () => 0.999 });
    await create();
    expect(sleeps).toEqual([
      backoffDelayMs(0, DEFAULT_RETRY, () => 0.999),
      backoffDelayMs(1, DEFAULT_RETRY, () => 0.999),
    ]);
    expect(sleeps[1]).toBeGreaterThan(sleeps[0]);
  });

  it('gives up on a Retry-After beyond maxRetryAfterMs, saying when to come back', async () => {
    const { seen, sleeps, create } = harness([limited('90')]);
    const error = (await create({ idempotencyKey: 'k' }).catch((e: unknown) => e)) as LedgerkeyApiError;
    expect(error).toBeInstanceOf(LedgerkeyApiError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfterSeconds: 90, attempts: 1 });
    expect(seen).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('throws the last 429 once its attempts are used up', async () => {
    const { seen, create } = harness(Array.from({ length: 5 }, () => limited('1')));
    const error = (await create({ idempotencyKey: 'k' }).catch((e: unknown) => e)) as LedgerkeyApiError;
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', attempts: DEFAULT_RETRY.maxAttempts });
    expect(seen).toHaveLength(DEFAULT_RETRY.maxAttempts);
  });
});
