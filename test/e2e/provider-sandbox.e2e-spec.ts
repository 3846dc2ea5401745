import type { RunningProviderSandbox } from '@ledgerkey/payments';
import {
  aSandboxCharge,
  eventually,
  SandboxHttp,
  startTestSandbox,
  stopAllSandboxes,
  TEST_TIMEOUT_HOLD_MS,
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
});
