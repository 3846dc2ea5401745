import {
  type ChargeRequest,
  PaymentProviderAmbiguousReferenceError,
  PaymentProviderUnavailableError,
  type RunningProviderSandbox,
  SandboxPaymentProvider,
} from '@ledgerkey/payments';
import {
  aSandboxCharge,
  SandboxHttp,
  sandboxDataDir,
  startTestSandbox,
  stopAllSandboxes,
  TEST_TIMEOUT_HOLD_MS,
} from '../support/provider-sandbox';

jest.setTimeout(60_000);

/** A client timeout well below the sandbox's hold, as ledgerkey's is below a real provider's. */
const CALL_TIMEOUT_MS = 400;

/** What ledgerkey sends: the reference doubles as the provider's idempotency key. */
function aChargeRequest(overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  const { reference, amount, currency, paymentMethod, metadata } = aSandboxCharge();
  return {
    reference,
    amount,
    currency,
    paymentMethod,
    metadata: { companyId: metadata.companyId, paymentId: metadata.paymentId },
    ...overrides,
  };
}

const call = (request: ChargeRequest) => ({ idempotencyKey: request.reference, timeoutMs: CALL_TIMEOUT_MS });

describe('SandboxPaymentProvider against the real sandbox process', () => {
  let sandbox: RunningProviderSandbox;
  let provider: SandboxPaymentProvider;
  let http: SandboxHttp;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    provider = new SandboxPaymentProvider({ baseUrl: sandbox.url, apiKey: sandbox.apiKey });
    http = new SandboxHttp(sandbox);
  });
  afterAll(stopAllSandboxes);

  describe('classifies each magic payment method', () => {
    it('pm_card_visa → succeeded, with the charge', async () => {
      const request = aChargeRequest({ paymentMethod: 'pm_card_visa' });
      const outcome = await provider.createCharge(request, call(request));
      expect(outcome).toEqual({
        kind: 'succeeded',
        charge: expect.objectContaining({
          reference: request.reference,
          amount: request.amount,
          status: 'succeeded',
        }),
      });
    });

    it('pm_card_declined → failed with card_declined, a final outcome', async () => {
      const request = aChargeRequest({ paymentMethod: 'pm_card_declined' });
      const outcome = await provider.createCharge(request, call(request));
      expect(outcome).toMatchObject({
        kind: 'failed',
        failureCode: 'card_declined',
        charge: { status: 'failed' },
      });
    });

    it('pm_card_timeout → unknown (timeout); the charge appears after the hold, one charge', async () => {
      const request = aChargeRequest({ paymentMethod: 'pm_card_timeout' });
      const startedAt = Date.now();
      const outcome = await provider.createCharge(request, call(request));
      expect(outcome).toMatchObject({ kind: 'unknown', reason: 'timeout' });
      expect(Date.now() - startedAt).toBeLessThan(TEST_TIMEOUT_HOLD_MS);
      // While the sandbox still holds the first request: no charge yet, the key is in use.
      expect(await provider.findChargeByReference(request.reference)).toBeNull();
      expect(await provider.createCharge(request, call(request))).toMatchObject({
        kind: 'unknown',
        reason: 'in_progress',
      });
      await new Promise((resolve) => setTimeout(resolve, TEST_TIMEOUT_HOLD_MS));
      const charge = await provider.findChargeByReference(request.reference);
      expect(charge).toMatchObject({ reference: request.reference, status: 'succeeded' });
      expect(await provider.createCharge(request, call(request))).toEqual({ kind: 'succeeded', charge });
      expect(await http.chargesWithReference(request.reference)).toBe(1);
    });

    it('pm_card_error → unknown (server_error), and nothing was charged', async () => {
      const request = aChargeRequest({ paymentMethod: 'pm_card_error' });
      expect(await provider.createCharge(request, call(request))).toMatchObject({
        kind: 'unknown',
        reason: 'server_error',
        detail: expect.stringContaining('500 processing_error'),
      });
      expect(await provider.findChargeByReference(request.reference)).toBeNull();
    });

    it('pm_card_lost_response → unknown (no_answer); the lookup by reference finds the charge; the retry gets it', async () => {
      const request = aChargeRequest({ paymentMethod: 'pm_card_lost_response' });
      expect(await provider.createCharge(request, call(request))).toMatchObject({
        kind: 'unknown',
        reason: 'no_answer',
      });
      const charge = await provider.findChargeByReference(request.reference);
      expect(charge).toMatchObject({
        reference: request.reference,
        status: 'succeeded',
        metadata: request.metadata,
      });
      expect(await provider.createCharge(request, call(request))).toEqual({ kind: 'succeeded', charge });
      expect(await http.chargesWithReference(request.reference)).toBe(1);
    });
  });

  it('makes one charge for a retried request with the same key, however often it is sent', async () => {
    const request = aChargeRequest();
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () => provider.createCharge(request, call(request))),
    );
    for (const outcome of outcomes) expect(['succeeded', 'unknown']).toContain(outcome.kind);
    const again = await provider.createCharge(request, call(request));
    expect(again.kind).toBe('succeeded');
    expect(await http.chargesWithReference(request.reference)).toBe(1);
  });

  it('rejects what the sandbox refuses as such: an unknown payment method, a key reused with other parameters', async () => {
    const unknownMethod = aChargeRequest({ paymentMethod: 'pm_card_amex' });
    expect(await provider.createCharge(unknownMethod, call(unknownMethod))).toMatchObject({
      kind: 'rejected',
      status: 400,
      code: 'payment_method_unknown',
    });
    const request = aChargeRequest();
    await provider.createCharge(request, call(request));
    expect(
      await provider.createCharge({ ...request, amount: request.amount + 1 }, call(request)),
    ).toMatchObject({
      kind: 'rejected',
      status: 422,
      code: 'idempotency_key_reused',
    });
  });

  it('answers unknown (not_authorized) for a wrong API key, and reads throw', async () => {
    const wrong = new SandboxPaymentProvider({
      baseUrl: sandbox.url,
      apiKey: 'sk_sandbox_not_the_key_000000',
    });
    const request = aChargeRequest();
    expect(await wrong.createCharge(request, call(request))).toMatchObject({
      kind: 'unknown',
      reason: 'not_authorized',
    });
    await expect(wrong.findChargeByReference(request.reference)).rejects.toMatchObject({
      code: 'payment_provider_unavailable',
      reason: 'not_authorized',
    });
  });

  it('refunds, idempotently, and rejects a refund beyond the charge', async () => {
    const request = aChargeRequest({ amount: 1000 });
    const created = await provider.createCharge(request, call(request));
    if (created.kind !== 'succeeded') throw new Error(`charge ${created.kind}`);
    const refund = { chargeId: created.charge.id, amount: 400 };
    const options = { idempotencyKey: `${request.reference}-refund-1`, timeoutMs: CALL_TIMEOUT_MS };
    const refunded = await provider.refundCharge(refund, options);
    expect(refunded).toMatchObject({
      kind: 'refunded',
      refund: { chargeId: created.charge.id, amount: 400 },
      charge: { refundedAmount: 400, status: 'succeeded' },
    });
    expect(await provider.refundCharge(refund, options)).toEqual(refunded);
    expect(
      await provider.refundCharge(
        { chargeId: created.charge.id, amount: 601 },
        { idempotencyKey: `${request.reference}-refund-2`, timeoutMs: CALL_TIMEOUT_MS },
      ),
    ).toMatchObject({ kind: 'rejected', status: 422, code: 'refund_exceeds_charge' });
  });

  it('lists a company’s charges and payouts in a range across pages', async () => {
    const companyId = `company-list-${Date.now()}`;
    const paging = new SandboxPaymentProvider({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, pageSize: 2 });
    const createdFrom = new Date();
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const request = aChargeRequest({ metadata: { companyId, paymentId: `p${index}` } });
      const outcome = await paging.createCharge(request, call(request));
      if (outcome.kind === 'succeeded') ids.push(outcome.charge.id);
    }
    await http.call('POST', '/v1/payouts', { body: { companyId } });
    const range = { createdFrom, createdTo: new Date(Date.now() + 1000), companyId };
    const charges = [];
    for await (const charge of paging.listCharges(range)) charges.push(charge.id);
    expect(charges).toEqual(ids);
    const payouts = [];
    for await (const payout of paging.listPayouts(range)) payouts.push(payout);
    expect(payouts).toHaveLength(1);
    expect(payouts[0].charges.map((charge) => charge.id)).toEqual(ids);
    const none = [];
    for await (const charge of paging.listCharges({ ...range, createdTo: createdFrom })) none.push(charge);
    expect(none).toEqual([]);
  });

  it('refuses to guess when several charges carry one reference', async () => {
    const request = aChargeRequest();
    await provider.createCharge(request, call(request));
    await http.call('POST', '/_sandbox/charges', {
      body: { reference: request.reference, amount: 1, currency: 'EUR' },
    });
    await expect(provider.findChargeByReference(request.reference)).rejects.toBeInstanceOf(
      PaymentProviderAmbiguousReferenceError,
    );
  });

  it('keeps the charges across a SIGKILL and restart of the sandbox; meanwhile calls are unknown, reads throw', async () => {
    const dataDir = await sandboxDataDir();
    const before = await startTestSandbox({ dataDir });
    const beforeProvider = new SandboxPaymentProvider({ baseUrl: before.url, apiKey: before.apiKey });
    const request = aChargeRequest();
    const created = await beforeProvider.createCharge(request, call(request));
    expect(created.kind).toBe('succeeded');
    await before.kill('SIGKILL');

    const next = aChargeRequest();
    expect(await beforeProvider.createCharge(next, call(next))).toMatchObject({
      kind: 'unknown',
      reason: 'no_answer',
    });
    await expect(beforeProvider.findChargeByReference(request.reference)).rejects.toBeInstanceOf(
      PaymentProviderUnavailableError,
    );

    const after = await startTestSandbox({ dataDir });
    const afterProvider = new SandboxPaymentProvider({ baseUrl: after.url, apiKey: after.apiKey });
    const found = await afterProvider.findChargeByReference(request.reference);
    expect(created.kind === 'succeeded' && found).toEqual(created.kind === 'succeeded' && created.charge);
    expect(await afterProvider.createCharge(request, call(request))).toEqual(created);
    expect(await afterProvider.findChargeByReference(next.reference)).toBeNull();
  });
});
