import { randomUUID } from 'node:crypto';
import { JobRegistry } from '@ledgerkey/jobs';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { eventually, paymentBooksOf, paymentEntryOf, paymentEnv } from '../support/payment-books';
import { aSettlement } from '../support/settlement.builder';
import {
  SandboxHttp,
  startTestSandbox,
  stopAllSandboxes,
  TEST_TIMEOUT_HOLD_MS,
} from '../support/provider-sandbox';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

jest.setTimeout(60_000);

const CREATE = '/v1/payments/create';
/** The default invoice builder line: 2 × 50.00 at 21 % → gross 12100. */
const GROSS = 12_100;

interface PaymentBody {
  id: string;
  object: string;
  invoiceId: string;
  amount: number;
  currency: string;
  status: 'processing' | 'succeeded' | 'failed';
  failureCode: string | null;
  provider: string;
  providerReference: string;
  providerChargeId: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * Payments through the real provider sandbox process, on the real application and PostgreSQL: each
 * magic payment method, replays and resumes, refusals that charge nothing, concurrency, the
 * recovery task, metrics. Provider calls time out after 1 s, below the sandbox's 2.5 s hold.
 */
describe('payments', () => {
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

  async function anIssuedInvoice(company: TestCompany): Promise<{ id: string; grossTotal: number }> {
    const response = await api.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey('invoice'))
      .send(anInvoice().build());
    expect(response.status).toBe(201);
    return response.body as { id: string; grossTotal: number };
  }

  function pay(company: TestCompany, body: Record<string, unknown>, key: string): Promise<Response> {
    return api.http.post(CREATE).set(company.auth).set('Idempotency-Key', key).send(body);
  }

  /** Retries with the key (honouring 409 and 202) until the answer is final. */
  async function payUntilFinal(
    company: TestCompany,
    body: Record<string, unknown>,
    key: string,
  ): Promise<Response> {
    return eventually(
      () => pay(company, body, key),
      (response) => response.status !== 202 && response.status !== 409,
      15_000,
      250,
    );
  }

  async function counters(reference?: string): Promise<{
    charges: { total: number };
    faultsInjected: { error: number; timeout: number; lostResponse: number };
    byReference?: { charges: number };
  }> {
    const query = reference === undefined ? '' : `?reference=${encodeURIComponent(reference)}`;
    return (await provider.call('GET', `/_sandbox/counters${query}`)).body;
  }

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

  describe('refusals charge nothing', () => {
    it('unknown or foreign invoice 404, above outstanding 422, fully credited 422, currency mismatch 422; stored and replayed', async () => {
      const company = await api.newCompany();
      const other = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const foreign = await anIssuedInvoice(other);
      const credited = await anIssuedInvoice(company);
      const credit = await api.http
        .post('/v1/sales/credit-notes/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey('credit'))
        .send({ invoiceId: credited.id, reason: 'duplicate' });
      expect(credit.status).toBe(201);
      const chargesBefore = (await counters()).charges.total;

      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ invoiceId: randomUUID(), paymentMethod: 'pm_card_visa' }, 404, 'not_found'],
        [{ invoiceId: foreign.id, paymentMethod: 'pm_card_visa' }, 404, 'not_found'],
        [
          { invoiceId: invoice.id, amount: GROSS + 1, paymentMethod: 'pm_card_visa' },
          422,
          'amount_exceeds_outstanding',
        ],
        [{ invoiceId: credited.id, paymentMethod: 'pm_card_visa' }, 422, 'invoice_fully_credited'],
        [{ invoiceId: invoice.id, currency: 'USD', paymentMethod: 'pm_card_visa' }, 422, 'currency_mismatch'],
      ];
      for (const [body, status, code] of cases) {
        const key = newKey('refused');
        const response = await pay(company, body, key);
        expect({ status: response.status, code: response.body.code }).toEqual({ status, code });
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        const replay = await pay(company, body, key);
        expect(replay.text).toBe(response.text);
        expect(replay.headers['idempotent-replayed']).toBe('true');
      }
      expect((await counters()).charges.total).toBe(chargesBefore);
      expect((await paymentBooksOf(db, company.companyId)).payments).toEqual([]);
    });

    it('bad bodies → 400 validation_failed or malformed_json, nothing stored: zero, negative, fractional amount, no method, bad id, extra field', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const chargesBefore = (await counters()).charges.total;
      const key = newKey('bad');
      const bodies: Array<[Record<string, unknown>, string]> = [
        [{ invoiceId: invoice.id, amount: 0, paymentMethod: 'pm_card_visa' }, 'amount'],
        [{ invoiceId: invoice.id, amount: -100, paymentMethod: 'pm_card_visa' }, 'amount'],
        [{ invoiceId: invoice.id, amount: 10.5, paymentMethod: 'pm_card_visa' }, 'amount'],
        [{ invoiceId: invoice.id, amount: '100', paymentMethod: 'pm_card_visa' }, 'amount'],
        [{ invoiceId: invoice.id }, 'paymentMethod'],
        [{ invoiceId: invoice.id, paymentMethod: 'pm card' }, 'paymentMethod'],
        [{ invoiceId: 'INV-000001', paymentMethod: 'pm_card_visa' }, 'invoiceId'],
        [{ invoiceId: invoice.id, paymentMethod: 'pm_card_visa', currency: 'eur' }, 'currency'],
        [{ invoiceId: invoice.id, paymentMethod: 'pm_card_visa', tip: 5 }, 'tip'],
      ];
      for (const [body, field] of bodies) {
        const response = await pay(company, body, key);
        expect(response.status).toBe(400);
        expect(response.body).toMatchObject({ code: 'validation_failed' });
        expect((response.body.errors as Array<{ field: string }>).map((error) => error.field)).toContain(
          field,
        );
      }
      const malformed = await api.http
        .post(CREATE)
        .set(company.auth)
        .set('Idempotency-Key', key)
        .set('Content-Type', 'application/json')
        .send('{"invoiceId":');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ code: 'malformed_json' });
      // Nothing was stored under the key: the fixed request runs.
      const fixed = await pay(company, { invoiceId: invoice.id, paymentMethod: 'pm_card_visa' }, key);
      expect(fixed.status).toBe(201);
      expect((await counters()).charges.total).toBe(chargesBefore + 1);
    });
    it('a paid or partly credited invoice owes only what is left: above it 422 amount_exceeds_outstanding, nothing charged', async () => {
      const company = await api.newCompany();
      const paid = await anIssuedInvoice(company);
      const full = await pay(company, { invoiceId: paid.id, paymentMethod: 'pm_card_visa' }, newKey('pay'));
      expect(full.body).toMatchObject({ status: 'succeeded', amount: GROSS });
      const partlyCredited = await anIssuedInvoice(company);
      // 1 × 50.00 at 21 % credited: 6050 of 12100 left.
      const credit = await api.http
        .post('/v1/sales/credit-notes/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey('credit'))
        .send({
          invoiceId: partlyCredited.id,
          reason: 'other',
          lines: [{ description: 'One hour less', quantity: '1', unitPrice: 5000, vatRate: '21' }],
        });
      expect(credit.status).toBe(201);
      const chargesBefore = (await counters()).charges.total;

      const refusals: Array<[string, Record<string, unknown>, string]> = [
        [
          'fully paid, default amount',
          { invoiceId: paid.id, paymentMethod: 'pm_card_visa' },
          'outstanding: 0',
        ],
        [
          'fully paid, 1 cent',
          { invoiceId: paid.id, amount: 1, paymentMethod: 'pm_card_visa' },
          'outstanding: 0',
        ],
        [
          'partly credited, 1 cent too much',
          { invoiceId: partlyCredited.id, amount: 6051, paymentMethod: 'pm_card_visa' },
          'outstanding: 6050',
        ],
      ];
      for (const [name, body, detail] of refusals) {
        const response = await pay(company, body, newKey('refused'));
        expect({ name, status: response.status, code: response.body.code }).toEqual({
          name,
          status: 422,
          code: 'amount_exceeds_outstanding',
        });
        expect(response.body.detail).toContain(detail);
      }
      expect((await counters()).charges.total).toBe(chargesBefore);

      // What is left can be paid, and then nothing more.
      const rest = await pay(
        company,
        { invoiceId: partlyCredited.id, paymentMethod: 'pm_card_visa' },
        newKey('pay'),
      );
      expect(rest.body).toMatchObject({ status: 'succeeded', amount: 6050 });
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.invoices[partlyCredited.id].paid).toBe(6050);
      expect(books.payments.map((payment) => payment.status)).toEqual(['succeeded', 'succeeded']);
    });

    it('hostile values in any field → 4xx problem+json with a code (a well-formed unknown method: 201 failed payment_method_unknown), never a 5xx, nothing charged', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const chargesBefore = (await counters()).charges.total;
      // (null in an optional field — amount, currency — means "omitted", as everywhere in the API.)
      const hostile: unknown[] = [
        '',
        '\u0000',
        '\ud800',
        [],
        {},
        true,
        -0,
        0.1,
        1e308,
        Number.MAX_SAFE_INTEGER + 2,
        '9'.repeat(60),
        'x'.repeat(300),
      ];
      const fields = ['invoiceId', 'amount', 'currency', 'paymentMethod'];
      for (const field of fields) {
        const required = field === 'invoiceId' || field === 'paymentMethod';
        for (const value of required ? [null, ...hostile] : hostile) {
          const body: Record<string, unknown> = {
            invoiceId: invoice.id,
            paymentMethod: 'pm_card_visa',
            [field]: value,
          };
          const response = await pay(company, body, newKey('hostile'));
          const refused = response.status >= 400 && response.status < 500;
          // A well-formed but unknown payment method reaches the provider, which refuses it: a
          // final `failed` payment with its code, nothing charged.
          const providerRefused =
            field === 'paymentMethod' && typeof value === 'string' && /^[\x21-\x7E]{1,255}$/.test(value);
          expect({
            field,
            value,
            outcome: refused ? 'refused' : `${response.status} ${response.body.failureCode}`,
          }).toEqual({
            field,
            value,
            outcome: providerRefused ? '201 payment_method_unknown' : 'refused',
          });
          if (refused) {
            expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
            expect(typeof response.body.code).toBe('string');
          }
        }
      }
      expect((await counters()).charges.total).toBe(chargesBefore);
      expect(
        (await paymentBooksOf(db, company.companyId)).payments.map((payment) => payment.failure_code),
      ).toEqual(['payment_method_unknown']);
    });
  });

  describe('concurrency', () => {
    it('ten simultaneous requests with one key: one charge, one payment; the others 409 or the same answer', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const key = newKey('pay');
      const body = { invoiceId: invoice.id, paymentMethod: 'pm_card_visa' };

      const responses = await Promise.all(Array.from({ length: 10 }, () => pay(company, body, key)));

      const created = responses.filter((response) => response.status === 201);
      expect(responses.every((response) => [201, 409].includes(response.status))).toBe(true);
      expect(created.length).toBeGreaterThanOrEqual(1);
      expect(new Set(created.map((response) => response.text)).size).toBe(1);
      for (const busy of responses.filter((response) => response.status === 409)) {
        expect(busy.body).toMatchObject({ code: 'idempotency_key_in_use' });
        expect(busy.headers['retry-after']).toBe('1');
      }
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.payments).toHaveLength(1);
      expect((await counters(books.payments[0].provider_reference)).byReference?.charges).toBe(1);
      expect(books.invoices[invoice.id].paid).toBe(GROSS);
    });

    it('payments of one invoice under different keys, at the same moment, never exceed its outstanding amount', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const chargesBefore = (await counters()).charges.total;

      // Five payments of 40 % each: at most two fit.
      const amount = Math.floor(GROSS * 0.4);
      const responses = await Promise.all(
        Array.from({ length: 5 }, () =>
          pay(company, { invoiceId: invoice.id, amount, paymentMethod: 'pm_card_visa' }, newKey('pay')),
        ),
      );

      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([201, 201, 422, 422, 422]);
      for (const refused of responses.filter((response) => response.status === 422)) {
        expect(refused.body).toMatchObject({ code: 'amount_exceeds_outstanding' });
      }
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.payments.map((payment) => payment.status)).toEqual(['succeeded', 'succeeded']);
      expect(books.invoices[invoice.id].paid).toBe(2 * amount);
      expect((await counters()).charges.total).toBe(chargesBefore + 2);
    });
  });

  describe('settlements', () => {
    it('a settlement cannot take what a processing payment holds back; the payment then succeeds in full', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const key = newKey('pay');
      const body = { invoiceId: invoice.id, amount: 10_000, paymentMethod: 'pm_card_timeout' };
      const processing = await pay(company, body, key);
      expect(processing.body).toMatchObject({ status: 'processing' });
      const settle = (payoutId: string, amount: number) =>
        api.http
          .post('/v1/settlements/create')
          .set(company.auth)
          .set('Idempotency-Key', newKey('settle'))
          .send(aSettlement().forPayout(payoutId).withFee(0).allocating(invoice.id, amount).build());

      const refused = await settle(`po_${randomUUID()}`, GROSS - 10_000 + 1);
      expect({ status: refused.status, code: refused.body.code }).toEqual({
        status: 422,
        code: 'allocation_exceeds_outstanding',
      });
      expect(refused.body.detail).toContain('payments still processing 10000');
      const rest = await settle(`po_${randomUUID()}`, GROSS - 10_000);
      expect(rest.status).toBe(201);

      const final = await payUntilFinal(company, body, key);

      expect(final.status).toBe(201);
      expect(final.body).toMatchObject({ id: processing.body.id, status: 'succeeded', amount: 10_000 });
      const books = await paymentBooksOf(db, company.companyId);
      expect(books.invoices[invoice.id]).toEqual({ gross: GROSS, paid: GROSS });
      expect(books.entries).toEqual({ [processing.body.id]: paymentEntryOf(10_000) });
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

  describe('the schema', () => {
    it('keeps a payment immutable but for its one outcome: processing → succeeded | failed; no deletes', async () => {
      const company = await api.newCompany();
      const invoice = await anIssuedInvoice(company);
      const paid = await pay(
        company,
        { invoiceId: invoice.id, amount: 100, paymentMethod: 'pm_card_visa' },
        newKey(),
      );
      const open = await pay(
        company,
        { invoiceId: invoice.id, amount: 100, paymentMethod: 'pm_card_error' },
        newKey(),
      );
      const where = `company_id = '${company.companyId}' AND id = `;

      for (const statement of [
        `UPDATE payments SET amount = 1 WHERE ${where}'${paid.body.id}'`,
        `UPDATE payments SET status = 'processing' WHERE ${where}'${paid.body.id}'`,
        `UPDATE payments SET status = 'failed', failure_code = 'x' WHERE ${where}'${paid.body.id}'`,
        `UPDATE payments SET provider_reference = 'other' WHERE ${where}'${open.body.id}'`,
        `DELETE FROM payments WHERE ${where}'${open.body.id}'`,
      ]) {
        await expect(db.query(statement)).rejects.toThrow(/immutable|cannot be deleted/);
      }
      // The CHECKs: a success names its charge, a failure its code.
      await expect(
        db.query(`UPDATE payments SET status = 'succeeded' WHERE ${where}'${open.body.id}'`),
      ).rejects.toThrow(/ck_payments_succeeded_charge/);
      await expect(
        db.query(`UPDATE payments SET status = 'failed' WHERE ${where}'${open.body.id}'`),
      ).rejects.toThrow(/ck_payments_failure_code/);
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
