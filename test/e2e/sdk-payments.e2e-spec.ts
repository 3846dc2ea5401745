import { JobRegistry } from '@ledgerkey/jobs';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import {
  type IssueInvoiceDto,
  LedgerkeyApiError,
  LedgerkeyClient,
  PaymentStillProcessingError,
} from '../../libs/sdk/src';
import { anInvoice, newKey } from '../support/invoice.builder';
import { paymentBooksOf, paymentEntryOf, paymentEnv } from '../support/payment-books';
import {
  SandboxHttp,
  startTestSandbox,
  stopAllSandboxes,
  TEST_TIMEOUT_HOLD_MS,
} from '../support/provider-sandbox';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

jest.setTimeout(60_000);

/** The default invoice builder line: 2 × 50.00 at 21 % → gross 12100. */
const GROSS = 12_100;

/**
 * The SDK's payments against the real API and the real provider sandbox: `create` tells a final
 * answer from a `processing` one, and the waits reach the final outcome with exactly one charge at
 * the provider (its counters by reference) and one ledger entry.
 */
describe('SDK payments', () => {
  let sandbox: RunningProviderSandbox;
  let provider: SandboxHttp;
  let api: TestApp;
  let db: Pool;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    provider = new SandboxHttp(sandbox);
    api = await startTestApp(paymentEnv(sandbox));
    db = testDatabasePool();
  });

  afterAll(async () => {
    await api?.close();
    await db?.end();
    await stopAllSandboxes();
  });

  async function aCompanyWithAnInvoice(): Promise<{
    company: TestCompany;
    ledgerkey: LedgerkeyClient;
    invoiceId: string;
  }> {
    const company = await api.newCompany();
    const ledgerkey = new LedgerkeyClient({
      baseUrl: api.baseUrl,
      apiKey: company.apiKey,
      timeoutMs: 10_000,
      retry: { maxAttempts: 5, baseDelayMs: 50, maxDelayMs: 500, maxRetryAfterMs: 5_000 },
    });
    const invoice = await ledgerkey.salesInvoices.create(anInvoice().build() as unknown as IssueInvoiceDto);
    return { company, ledgerkey, invoiceId: invoice.data.id };
  }

  async function expectOneChargeAndOneEntry(
    company: TestCompany,
    invoiceId: string,
    payment: { id: string; providerReference: string },
  ): Promise<void> {
    expect(await provider.chargesWithReference(payment.providerReference)).toBe(1);
    const books = await paymentBooksOf(db, company.companyId);
    expect(books.payments).toEqual([expect.objectContaining({ id: payment.id, status: 'succeeded' })]);
    expect(books.entries).toEqual({ [payment.id]: paymentEntryOf(GROSS) });
    expect(books.invoices[invoiceId].paid).toBe(GROSS);
    expect(books.events).toEqual([`payment.succeeded ${payment.id}`]);
  }

  it('pm_card_visa: create is final at once', async () => {
    const { company, ledgerkey, invoiceId } = await aCompanyWithAnInvoice();

    const result = await ledgerkey.payments.create({ invoiceId, paymentMethod: 'pm_card_visa' });

    expect(result).toMatchObject({ final: true, status: 201, data: { status: 'succeeded' } });
    await expectOneChargeAndOneEntry(company, invoiceId, result.data);
  });

  it('pm_card_lost_response: create is not final (202); createAndWait with the same key gets the one charge', async () => {
    const { company, ledgerkey, invoiceId } = await aCompanyWithAnInvoice();
    const body = { invoiceId, paymentMethod: 'pm_card_lost_response' };
    const key = newKey('sdk-pay');

    const first = await ledgerkey.payments.create(body, { idempotencyKey: key });
    expect(first).toMatchObject({ final: false, status: 202, data: { status: 'processing' } });
    if (first.final) throw new Error('unreachable');
    expect(first.location).toBe(`/v1/payments/${first.data.id}`);
    expect(first.retryAfterMs).toBeGreaterThan(0);

    const settled = await ledgerkey.payments.createAndWait(body, {
      idempotencyKey: key,
      pollIntervalMs: 100,
    });

    expect(settled).toMatchObject({
      final: true,
      idempotencyKey: key,
      data: { id: first.data.id, status: 'succeeded', providerChargeId: expect.stringMatching(/^ch_/) },
    });
    await expectOneChargeAndOneEntry(company, invoiceId, settled.data);
  });

  it('pm_card_timeout: createAndWait rides out the provider hold and returns the succeeded payment', async () => {
    const { company, ledgerkey, invoiceId } = await aCompanyWithAnInvoice();
    const keys: string[] = [];
    const started = Date.now();

    const settled = await ledgerkey.payments.createAndWait(
      { invoiceId, paymentMethod: 'pm_card_timeout' },
      { onKey: (key) => void keys.push(key), pollIntervalMs: 200, maxWaitMs: 30_000 },
    );

    // The provider held the first charge request longer than ledgerkey's call timeout.
    expect(Date.now() - started).toBeGreaterThanOrEqual(TEST_TIMEOUT_HOLD_MS - 500);
    expect(keys).toHaveLength(1);
    expect(settled).toMatchObject({ final: true, idempotencyKey: keys[0], data: { status: 'succeeded' } });
    expect(settled.attempts).toBeGreaterThan(1);
    await expectOneChargeAndOneEntry(company, invoiceId, settled.data);
    const records = (await paymentBooksOf(db, company.companyId)).records;
    expect(Object.keys(records)).toEqual(keys);
  });

  it('waitForFinal polls GET while the recovery worker resolves the payment, without any retry of the key', async () => {
    const { company, ledgerkey, invoiceId } = await aCompanyWithAnInvoice();
    const first = await ledgerkey.payments.create({ invoiceId, paymentMethod: 'pm_card_timeout' });
    expect(first.final).toBe(false);

    // The recovery task exactly as the worker registered it, running on its own meanwhile.
    const task = api.app
      .get(JobRegistry)
      .all()
      .find((registration) => registration.task.name === 'recover_payments');
    let recovering = true;
    const recovery = (async () => {
      while (recovering) {
        await task!.run({});
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    try {
      const settled = await ledgerkey.payments.waitForFinal(first.data.id, {
        pollIntervalMs: 200,
        maxWaitMs: 30_000,
      });
      expect(settled).toMatchObject({ id: first.data.id, status: 'succeeded' });
    } finally {
      recovering = false;
      await recovery;
    }
    await expectOneChargeAndOneEntry(company, invoiceId, first.data);
  });

  it('at the deadline a still-processing payment is an error carrying the payment and key, not a failure', async () => {
    const { company, ledgerkey, invoiceId } = await aCompanyWithAnInvoice();
    const body = { invoiceId, paymentMethod: 'pm_card_timeout' };

    const error = (await ledgerkey.payments
      .createAndWait(body, { idempotencyKey: newKey('sdk-deadline'), maxWaitMs: 300, pollIntervalMs: 200 })
      .catch((e: unknown) => e)) as PaymentStillProcessingError;

    expect(error).toBeInstanceOf(PaymentStillProcessingError);
    expect(error.payment.status).toBe('processing');
    // Waiting on with the same key finishes the same payment.
    const settled = await ledgerkey.payments.createAndWait(body, {
      idempotencyKey: error.idempotencyKey,
      pollIntervalMs: 200,
    });
    expect(settled.data).toMatchObject({ id: error.payment.id, status: 'succeeded' });
    await expectOneChargeAndOneEntry(company, invoiceId, settled.data);
  });

  it('pm_card_declined is final; a refusal is a typed error and charges nothing', async () => {
    const { ledgerkey, invoiceId } = await aCompanyWithAnInvoice();
    const declined = await ledgerkey.payments.createAndWait({ invoiceId, paymentMethod: 'pm_card_declined' });
    expect(declined).toMatchObject({ final: true, data: { status: 'failed', failureCode: 'card_declined' } });

    const refused = (await ledgerkey.payments
      .createAndWait({ invoiceId, amount: GROSS + 1, paymentMethod: 'pm_card_visa' })
      .catch((e: unknown) => e)) as LedgerkeyApiError;
    expect(refused).toBeInstanceOf(LedgerkeyApiError);
    expect(refused).toMatchObject({ status: 422, code: 'amount_exceeds_outstanding' });
    const listed = await ledgerkey.payments.list({ invoiceId });
    expect(listed.data.map((payment) => payment.status)).toEqual(['failed']);
  });
});
