import { JobRegistry } from '@ledgerkey/jobs';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { newKey } from '../support/invoice.builder';
import { eventually, paymentBooksOf, paymentEntryOf } from '../support/payment-books';
import { GROSS, paymentCalls, type PaymentBody } from '../support/payment-calls';
import { type SandboxHttp, TEST_TIMEOUT_HOLD_MS } from '../support/provider-sandbox';
import { startSandboxApp, stopSandboxApp } from '../support/sandbox-app';
import type { TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/**
 * Payments through the real provider sandbox process, on the real application and PostgreSQL: each
 * magic payment method, replays and resumes, the recovery task, reads and metrics. Provider calls
 * time out after 1 s, below the sandbox's 2.5 s hold. Refusals and integrity: the sibling files.
 */
describe('payments', () => {
  let sandbox: RunningProviderSandbox;
  let provider: SandboxHttp;
  let api: TestApp;
  let db: Pool;

  beforeAll(async () => {
    ({ sandbox, provider, api, db } = await startSandboxApp());
  });

  afterAll(async () => {
    await stopSandboxApp({ api, db });
  });

  const { anIssuedInvoice, pay, payUntilFinal, counters } = paymentCalls(() => ({
    sandbox,
    provider,
    api,
    db,
  }));

  describe('per magic payment method', () => {
    it('pm_card_visa → 201 succeeded: ledger entry, paid total, event; a retry replays byte for byte', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const key = newKey('pay');
      const body = { invoiceId: invoice.id, paymentMethod: 'pm_card_visa' };

      const response = await pay(company, body, key);

      expect(response.status).toBe(201);
      const payment = response.body as PaymentBody;
      expect(payment).toEqual({
        id: expect.any(String),
        object: 'payment',
        invoiceId: invoice.id,
        amount: GROSS,
        currency: 'EUR',
        status: 'succeeded',
        failureCode: null,
        provider: 'sandbox',
        providerReference: `lkpay_${payment.id}`,
        providerChargeId: expect.stringMatching(/^ch_/),
        metadata: {},
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(response.headers.location).toBe(`/v1/payments/${payment.id}`);
      expect(response.headers['idempotency-key-expires']).toBeDefined();

      const replay = await pay(company, body, key);
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(response.text);
      expect(replay.headers['idempotent-replayed']).toBe('true');

      const books = await paymentBooksOf(db, company.companyId);
      expect(books.payments).toEqual([
        expect.objectContaining({
          id: payment.id,
          status: 'succeeded',
          provider_charge_id: payment.providerChargeId,
        }),
      ]);
      expect(books.entries).toEqual({ [payment.id]: paymentEntryOf(GROSS) });
      expect(books.invoices[invoice.id]).toEqual({ gross: GROSS, paid: GROSS });
      expect(books.events).toEqual([`payment.succeeded ${payment.id}`]);
      expect(books.records[key]).toEqual({ state: 'completed', attempt: 1, response_status: 201 });
      expect((await counters(payment.providerReference)).byReference?.charges).toBe(1);

      const fetched = await api.http.get(`/v1/payments/${payment.id}`).set(company.auth);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual(payment);
      const invoiceNow = await api.http.get(`/v1/sales/invoices/${invoice.id}`).set(company.auth);
      expect(invoiceNow.body).toMatchObject({ paidTotal: GROSS });
    });

    it('pm_card_declined → 201 failed with card_declined, a final outcome: replayed, no entry, paid total unchanged', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const key = newKey('pay');
      const body = { invoiceId: invoice.id, paymentMethod: 'pm_card_declined' };

      const response = await pay(company, body, key);
      const replay = await pay(company, body, key);

      expect(response.status).toBe(201);
      expect(response.body).toMatchObject({
        status: 'failed',
        failureCode: 'card_declined',
        providerChargeId: expect.stringMatching(/^ch_/),
      });
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(response.text);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.entries).toEqual({});
      expect(books.invoices[invoice.id]).toEqual({ gross: GROSS, paid: 0 });
      expect(books.events).toEqual([`payment.failed ${response.body.id}`]);
      expect((await counters(response.body.providerReference)).byReference?.charges).toBe(1);

      // The decline released the amount: a new payment (another key) may take it.
      const again = await pay(
        company,
        { invoiceId: invoice.id, paymentMethod: 'pm_card_visa' },
        newKey('pay'),
      );
      expect(again.body).toMatchObject({ status: 'succeeded', amount: GROSS });
    });

    it('pm_card_error → 202 processing (Location, Retry-After, nothing stored); a retry resumes: no charge found, sent again', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const key = newKey('pay');
      const body = { invoiceId: invoice.id, paymentMethod: 'pm_card_error' };
      const errorsBefore = (await counters()).faultsInjected.error;

      const response = await pay(company, body, key);

      expect(response.status).toBe(202);
      const payment = response.body as PaymentBody;
      expect(payment).toMatchObject({ status: 'processing', providerChargeId: null, amount: GROSS });
      expect(response.headers.location).toBe(`/v1/payments/${payment.id}`);
      expect(response.headers['retry-after']).toBe('1');
      expect(response.headers['idempotency-key-expires']).toBeUndefined();
      expect((await paymentBooksOf(db, company.companyId)).records[key]).toEqual({
        state: 'failed_retryable',
        attempt: 1,
        response_status: null,
      });

      const retry = await pay(company, body, key);
      expect(retry.status).toBe(202);
      expect(retry.body).toMatchObject({ id: payment.id, status: 'processing' });
      // Resumed: looked up (nothing), then the same charge sent again, which failed again.
      expect((await counters()).faultsInjected.error - errorsBefore).toBe(2);
      expect((await counters(payment.providerReference)).byReference?.charges).toBe(0);
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.records[key]).toMatchObject({ state: 'failed_retryable', attempt: 2 });
      expect(books.payments).toEqual([expect.objectContaining({ id: payment.id, status: 'processing' })]);
      expect(books.events).toEqual([]);
      // What it holds back is not outstanding any more.
      const second = await pay(
        company,
        { invoiceId: invoice.id, paymentMethod: 'pm_card_visa' },
        newKey('pay'),
      );
      expect(second.status).toBe(422);
      expect(second.body).toMatchObject({ code: 'amount_exceeds_outstanding' });
    });

    it('a provider error, then the provider recovers: the retry finds no charge, sends it again once → exactly one charge', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const key = newKey('pay');
      const body = { invoiceId: invoice.id, paymentMethod: 'pm_card_visa' };
      await provider.call('PUT', '/_sandbox/faults', { body: { faults: 'error=1' } });
      let response: Response;
      try {
        response = await pay(company, body, key);
      } finally {
        await provider.call('PUT', '/_sandbox/faults', { body: { faults: '' } });
      }
      expect(response.status).toBe(202);

      const retry = await pay(company, body, key);

      expect(retry.status).toBe(201);
      expect(retry.body).toMatchObject({ id: response.body.id, status: 'succeeded' });
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect((await counters(response.body.providerReference)).byReference?.charges).toBe(1);
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.records[key]).toEqual({ state: 'completed', attempt: 2, response_status: 201 });
      expect(books.entries).toEqual({ [response.body.id]: paymentEntryOf(GROSS) });
      expect(books.invoices[invoice.id].paid).toBe(GROSS);
    });

    it('pm_card_timeout → 202; retries get 202 while the provider holds it, then 201 succeeded once it charged: one charge', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const key = newKey('pay');
      const body = { invoiceId: invoice.id, paymentMethod: 'pm_card_timeout' };
      const started = Date.now();

      const response = await pay(company, body, key);
      expect(response.status).toBe(202);
      // The provider still holds the first request: no charge to find, and the resend is "in use".
      const early = await pay(company, body, key);
      expect(early.status).toBe(202);
      expect(Date.now() - started).toBeLessThan(TEST_TIMEOUT_HOLD_MS);

      const final = await payUntilFinal(company, body, key);

      expect(final.status).toBe(201);
      expect(final.body).toMatchObject({ id: response.body.id, status: 'succeeded' });
      expect((await counters(response.body.providerReference)).byReference?.charges).toBe(1);
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.entries).toEqual({ [response.body.id]: paymentEntryOf(GROSS) });
      expect(books.events).toEqual([`payment.succeeded ${response.body.id}`]);
    });

    it('pm_card_lost_response → 202; the retry with the same key finds the charge → 201 succeeded; one charge', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const key = newKey('pay');
      const body = { invoiceId: invoice.id, paymentMethod: 'pm_card_lost_response' };

      const response = await pay(company, body, key);
      expect(response.status).toBe(202);
      const retry = await pay(company, body, key);

      expect(retry.status).toBe(201);
      expect(retry.body).toMatchObject({
        id: response.body.id,
        status: 'succeeded',
        providerChargeId: expect.stringMatching(/^ch_/),
      });
      expect((await counters(response.body.providerReference)).byReference?.charges).toBe(1);
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.payments).toEqual([expect.objectContaining({ status: 'succeeded' })]);
      expect(books.entries).toEqual({ [response.body.id]: paymentEntryOf(GROSS) });
      expect(books.invoices[invoice.id].paid).toBe(GROSS);
      expect(books.unbalanced).toBe(0);
    });
  });

  describe('the recovery task', () => {
    it('resolves a payment left without an outcome, without any client retry; the key then replays it', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const key = newKey('pay');
      const body = { invoiceId: invoice.id, paymentMethod: 'pm_card_timeout' };
      const response = await pay(company, body, key);
      expect(response.status).toBe(202);
      const reference = (response.body as PaymentBody).providerReference;
      // The provider charges once its hold ends; nobody asks ledgerkey again.
      await eventually(
        () => counters(reference),
        (seen) => seen.byReference?.charges === 1,
      );

      // The task exactly as the worker registered it (its crontab and interval call the same run).
      const task = api.app
        .get(JobRegistry)
        .all()
        .find((registration) => registration.task.name === 'recover_payments');
      await eventually(
        async () => {
          await task!.run({});
          return (await paymentBooksOf(db, company.companyId)).payments[0].status;
        },
        (status) => status === 'succeeded',
      );

      const books = await paymentBooksOf(db, company.companyId);
      expect(books.records[key]).toMatchObject({ state: 'completed', response_status: 201 });
      expect(books.entries).toEqual({ [response.body.id]: paymentEntryOf(GROSS) });
      expect(books.invoices[invoice.id].paid).toBe(GROSS);
      expect((await counters(reference)).byReference?.charges).toBe(1);
      const replay = await pay(company, body, key);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toMatchObject({ id: response.body.id, status: 'succeeded' });
    });
  });

  describe('reads and metrics', () => {
    it('lists payments per company and per invoice; another company sees none of them', async () => {
      const company = await api.newCompany();
      const first = await anIssuedInvoice(company);
      const second = await anIssuedInvoice(company);
      const a = await pay(
        company,
        { invoiceId: first.id, amount: 100, paymentMethod: 'pm_card_visa' },
        newKey(),
      );
      const b = await pay(
        company,
        { invoiceId: second.id, amount: 200, paymentMethod: 'pm_card_declined' },
        newKey(),
      );
      const c = await pay(
        company,
        { invoiceId: first.id, amount: 300, paymentMethod: 'pm_card_visa' },
        newKey(),
      );

      const all = await api.http.get('/v1/payments?limit=2').set(company.auth);
      expect(all.body).toMatchObject({ object: 'list', hasMore: true });
      expect(all.body.data.map((payment: PaymentBody) => payment.id)).toEqual([a.body.id, b.body.id]);
      const rest = await api.http.get(`/v1/payments?limit=2&startingAfter=${b.body.id}`).set(company.auth);
      expect(rest.body.data.map((payment: PaymentBody) => payment.id)).toEqual([c.body.id]);
      const ofFirst = await api.http
        .get(`/v1/payments?invoiceId=${first.id.toUpperCase()}`)
        .set(company.auth);
      expect(ofFirst.body.data.map((payment: PaymentBody) => payment.id)).toEqual([a.body.id, c.body.id]);

      const stranger = await api.newCompany();
      expect((await api.http.get(`/v1/payments/${a.body.id}`).set(stranger.auth)).status).toBe(404);
      expect((await api.http.get('/v1/payments').set(stranger.auth)).body.data).toEqual([]);
      expect((await api.http.get('/v1/payments?invoiceId=nope').set(company.auth)).status).toBe(400);
    });

    it('exports provider calls by outcome with latency, recoveries by result and unfinished operations by age', async () => {
      const metrics = await api.http.get('/metrics');
      expect(metrics.text).toMatch(
        /ledgerkey_payment_provider_call_duration_seconds_count\{call="create_charge",outcome="succeeded"\} [1-9]/,
      );
      expect(metrics.text).toMatch(
        /ledgerkey_payment_provider_call_duration_seconds_count\{call="create_charge",outcome="timeout"\} [1-9]/,
      );
      expect(metrics.text).toMatch(
        /ledgerkey_payment_provider_call_duration_seconds_count\{call="find_charge",outcome="found"\} [1-9]/,
      );
      expect(metrics.text).toMatch(/ledgerkey_payment_recoveries_total\{result="succeeded"\} [1-9]/);
      // The pm_card_error payment above is still unknown.
      expect(metrics.text).toMatch(
        /ledgerkey_idempotency_unfinished_operations\{operation="payments.create",state="failed_retryable",age="under_1m"\} [1-9]/,
      );
      expect(metrics.text).toMatch(
        /ledgerkey_idempotency_requests_total\{operation="payments.create",outcome="pending"\} [1-9]/,
      );
      expect(metrics.text).toMatch(
        /ledgerkey_idempotency_requests_total\{operation="payments.create",outcome="resumed"\} [1-9]/,
      );
    });
  });
});
