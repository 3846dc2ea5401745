import { randomUUID } from 'node:crypto';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import { ReceiveProviderEventHandler } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { eventually, paymentEnv } from '../support/payment-books';
import { sampleValue } from '../support/prometheus';
import {
  comparableBooksOf,
  eventBody,
  type SandboxEvent,
  scrape,
  sandboxEventsOf,
  signedHeaders,
} from '../support/provider-events';
import { SandboxHttp, startTestSandbox, stopAllSandboxes } from '../support/provider-sandbox';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

jest.setTimeout(60_000);

const RECEIVER = '/v1/providers/sandbox/events';
/** The default invoice builder line: 2 × 50.00 at 21 % → gross 12100. */
const GROSS = 12_100;

interface Payment {
  id: string;
  status: string;
  providerReference: string;
  providerChargeId: string | null;
}

/**
 * The provider's webhooks, end to end: real sandbox events (the sandbox sends none here; each test
 * delivers the sandbox's own events, signed with its secret, in the order and as often as it
 * wants), the real application and PostgreSQL. Payments the provider answered too late stay
 * processing (no recovery runs in this app), so the events are what completes them.
 */
describe('provider events', () => {
  let sandbox: RunningProviderSandbox;
  let provider: SandboxHttp;
  let api: TestApp;
  let db: Pool;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    provider = new SandboxHttp(sandbox);
    api = await startTestApp({
      ...paymentEnv(sandbox),
      PAYMENT_PROVIDER_WEBHOOK_SECRET: sandbox.webhookSecret,
      PAYMENT_RECOVERY_INTERVAL_MS: '100',
    });
    db = testDatabasePool();
  });

  afterAll(async () => {
    await api?.close();
    await db?.end();
    await stopAllSandboxes();
  });

  function deliver(event: SandboxEvent, at?: Date): Promise<Response> {
    const body = eventBody(event);
    return api.http
      .post(RECEIVER)
      .set(signedHeaders(sandbox.webhookSecret, event.id, body, at))
      .send(body);
  }

  async function anIssuedInvoice(company: TestCompany): Promise<string> {
    const response = await api.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey('invoice'))
      .send(anInvoice().build());
    expect(response.status).toBe(201);
    return (response.body as { id: string }).id;
  }

  /** A payment the provider charged (`pm_card_visa`: 201) or whose answer it lost (202, processing). */
  async function aPayment(
    company: TestCompany,
    paymentMethod: 'pm_card_visa' | 'pm_card_lost_response',
    key = newKey('pay'),
  ): Promise<Payment & { invoiceId: string; key: string }> {
    const invoiceId = await anIssuedInvoice(company);
    const response = await api.http
      .post('/v1/payments/create')
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send({ invoiceId, paymentMethod });
    expect(response.status).toBe(paymentMethod === 'pm_card_visa' ? 201 : 202);
    return { ...(response.body as Payment), invoiceId, key };
  }

  async function eventsOf(company: TestCompany, type?: string): Promise<SandboxEvent[]> {
    const events = await sandboxEventsOf(provider, company.companyId);
    return type === undefined ? events : events.filter((event) => event.type === type);
  }

  async function chargeOf(reference: string): Promise<{ id: string }> {
    const { body } = await provider.call('GET', `/v1/charges?reference=${encodeURIComponent(reference)}`);
    return (body as { data: Array<{ id: string }> }).data[0];
  }

  async function recorded(company: TestCompany): Promise<Array<{ event_id: string; status: string }>> {
    const { rows } = await db.query<{ event_id: string; status: string }>(
      `SELECT event_id, status FROM provider_events WHERE company_id = $1 ORDER BY received_at`,
      [company.companyId],
    );
    return rows;
  }

  async function paymentOf(company: TestCompany, id: string): Promise<Payment> {
    return (await api.http.get(`/v1/payments/${id}`).set(company.auth)).body as Payment;
  }

  async function countOf(sql: string, companyId: string): Promise<number> {
    const { rows } = await db.query<{ n: number }>(sql, [companyId]);
    return rows[0].n;
  }

  describe('charge.succeeded and charge.failed', () => {
    it('completes a processing payment through its outcome path: ledger, paid total, the key replays it', async () => {
      const company = await api.newCompany();
      const payment = await aPayment(company, 'pm_card_lost_response');
      expect(payment.status).toBe('processing');
      const [succeeded] = await eventsOf(company, 'charge.succeeded');

      const response = await deliver(succeeded);

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ duplicate: false, result: 'applied' });
      const now = await paymentOf(company, payment.id);
      expect(now).toMatchObject({ status: 'succeeded', providerChargeId: succeeded.data.id });
      const books = await comparableBooksOf(db, company.companyId);
      expect(books.trialBalance).toEqual([
        `accounts_receivable ${GROSS}/${GROSS}`,
        `provider_clearing ${GROSS}/0`,
        'revenue 0/10000',
        'vat_payable 0/2100',
      ]);
      expect(books.paidTotals).toEqual([GROSS]);
      // The payment's key finished with the outcome: a retry replays it, nothing is charged again.
      const retry = await api.http
        .post('/v1/payments/create')
        .set(company.auth)
        .set('Idempotency-Key', payment.key)
        .send({ invoiceId: payment.invoiceId, paymentMethod: 'pm_card_lost_response' });
      expect(retry.status).toBe(201);
      expect(retry.body).toMatchObject({ id: payment.id, status: 'succeeded' });
      expect(await provider.chargesWithReference(payment.providerReference)).toBe(1);
      expect(await recorded(company)).toEqual([{ event_id: succeeded.id, status: 'applied' }]);
    });

    it('a repeat answers {duplicate: true} and applies nothing, also a week later', async () => {
      const company = await api.newCompany();
      await aPayment(company, 'pm_card_lost_response');
      const [succeeded] = await eventsOf(company, 'charge.succeeded');
      expect((await deliver(succeeded)).body).toMatchObject({ result: 'applied' });
      const before = await comparableBooksOf(db, company.companyId);

      // Signed now: the provider's retry of the same event id, whenever it comes.
      const again = await deliver(succeeded);

      expect(again.status).toBe(200);
      expect(again.body).toEqual({ duplicate: true, result: 'duplicate' });
      expect(await comparableBooksOf(db, company.companyId)).toEqual(before);
    });

    it('the same event ten times at once → one effect', async () => {
      const company = await api.newCompany();
      const payment = await aPayment(company, 'pm_card_lost_response');
      const [succeeded] = await eventsOf(company, 'charge.succeeded');

      const answers = await Promise.all(Array.from({ length: 10 }, () => deliver(succeeded)));

      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
      const results = answers.map((answer) => (answer.body as { result: string }).result);
      expect(results.filter((result) => result === 'applied')).toHaveLength(1);
      expect(results.every((result) => ['applied', 'duplicate', 'parked'].includes(result))).toBe(true);
      expect(await paymentOf(company, payment.id)).toMatchObject({ status: 'succeeded' });
      expect(
        await countOf(
          `SELECT count(*)::int AS n FROM journal_entries WHERE company_id = $1 AND source_type = 'payment'`,
          company.companyId,
        ),
      ).toBe(1);
      expect(
        await countOf(
          `SELECT count(*)::int AS n FROM events WHERE company_id = $1 AND type = 'payment.succeeded'`,
          company.companyId,
        ),
      ).toBe(1);
      expect(await recorded(company)).toEqual([{ event_id: succeeded.id, status: 'applied' }]);
    });

    it('charge.failed fails a processing payment: no ledger entry, nothing paid', async () => {
      const company = await api.newCompany();
      const invoiceId = await anIssuedInvoice(company);
      // A decline whose answer is lost: the payment stays processing until its event.
      await provider.call('PUT', '/_sandbox/faults', { body: { faults: 'lost_response=1' } });
      let response: Response;
      try {
        response = await api.http
          .post('/v1/payments/create')
          .set(company.auth)
          .set('Idempotency-Key', newKey('pay'))
          .send({ invoiceId, paymentMethod: 'pm_card_declined' });
      } finally {
        await provider.call('PUT', '/_sandbox/faults', { body: { faults: '' } });
      }
      expect(response.status).toBe(202);
      const [failed] = await eventsOf(company, 'charge.failed');

      expect((await deliver(failed)).body).toEqual({ duplicate: false, result: 'applied' });

      expect(await paymentOf(company, (response.body as Payment).id)).toMatchObject({
        status: 'failed',
        providerChargeId: failed.data.id,
      });
      const books = await comparableBooksOf(db, company.companyId);
      expect(books.paidTotals).toEqual([0]);
      expect(books.trialBalance).not.toContainEqual(expect.stringMatching(/^provider_clearing/));
    });

    it('an event that disagrees with a final payment is recorded as ignored, the payment left as it is', async () => {
      const company = await api.newCompany();
      const payment = await aPayment(company, 'pm_card_visa');
      const [succeeded] = await eventsOf(company, 'charge.succeeded');
      const forged: SandboxEvent = {
        ...succeeded,
        id: `evt_${randomUUID()}`,
        type: 'charge.failed',
        data: { ...succeeded.data, status: 'failed', failureCode: 'card_declined' },
      };

      const response = await deliver(forged);

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ duplicate: false, result: 'ignored' });
      expect(await paymentOf(company, payment.id)).toMatchObject({ status: 'succeeded' });
      expect(await recorded(company)).toEqual([{ event_id: forged.id, status: 'ignored' }]);
    });
  });

  describe('charge.refunded', () => {
    async function refund(chargeId: string, amount: number): Promise<void> {
      const response = await provider.call('POST', `/v1/charges/${chargeId}/refunds`, {
        body: { amount },
        idempotencyKey: randomUUID(),
      });
      expect(response.status).toBe(201);
    }

    it('books the refund once: reverse posting, paid total lowered, payment.refunded', async () => {
      const company = await api.newCompany();
      const payment = await aPayment(company, 'pm_card_visa');
      await refund(payment.providerChargeId as string, 2100);
      const [refunded] = await eventsOf(company, 'charge.refunded');

      expect((await deliver(refunded)).body).toEqual({ duplicate: false, result: 'applied' });
      expect((await deliver(refunded)).body).toEqual({ duplicate: true, result: 'duplicate' });

      const books = await comparableBooksOf(db, company.companyId);
      expect(books.refunds).toEqual([2100]);
      expect(books.paidTotals).toEqual([GROSS - 2100]);
      expect(books.trialBalance).toEqual([
        `accounts_receivable ${GROSS + 2100}/${GROSS}`,
        `provider_clearing ${GROSS}/2100`,
        'revenue 0/10000',
        'vat_payable 0/2100',
      ]);
      expect(
        await countOf(
          `SELECT count(*)::int AS n FROM events WHERE company_id = $1 AND type = 'payment.refunded'`,
          company.companyId,
        ),
      ).toBe(1);
      const invoice = await api.http.get(`/v1/sales/invoices/${payment.invoiceId}`).set(company.auth);
      expect(invoice.body).toMatchObject({ paidTotal: GROSS - 2100 });
    });

    it("posts each refund on the provider's refund date (UTC), not the booking date", async () => {
      const company = await api.newCompany();
      const payment = await aPayment(company, 'pm_card_visa');
      await refund(payment.providerChargeId as string, 2100);
      const [refunded] = await eventsOf(company, 'charge.refunded');
      const backdated: SandboxEvent = {
        ...refunded,
        data: {
          ...refunded.data,
          refunds: refunded.data.refunds.map((r: object) => ({
            ...r,
            createdAt: '2026-01-15T23:30:00-01:00',
          })),
        },
      };

      expect((await deliver(backdated)).body).toEqual({ duplicate: false, result: 'applied' });

      const { rows } = await db.query<{ entry_date: string }>(
        `SELECT entry_date::text AS entry_date FROM journal_entries WHERE company_id = $1 AND source_type = 'refund'`,
        [company.companyId],
      );
      expect(rows).toEqual([{ entry_date: '2026-01-16' }]);
    });

    it('refunds adding up to more than the payment: recorded ignored with the reason, none booked, never a 5xx', async () => {
      const company = await api.newCompany();
      const payment = await aPayment(company, 'pm_card_visa');
      const processing = await aPayment(company, 'pm_card_lost_response');
      const over = (event: SandboxEvent): SandboxEvent => ({
        ...event,
        id: `${event.id}_over`,
        type: 'charge.refunded',
        data: {
          ...event.data,
          status: 'refunded',
          refundedAmount: GROSS + 1,
          refunds: [
            { id: `re_${randomUUID()}`, amount: GROSS, createdAt: new Date().toISOString() },
            { id: `re_${randomUUID()}`, amount: 1, createdAt: new Date().toISOString() },
          ],
        },
      });
      const [paidEvent, processingEvent] = await eventsOf(company, 'charge.succeeded');
      expect(paidEvent.data.reference).toBe(payment.providerReference);

      const final = await deliver(over(paidEvent));
      expect(final.status).toBe(200);
      expect(final.body).toMatchObject({ result: 'ignored', reason: expect.stringContaining('exceed') });
      // A processing payment is completed by the charge; its refunds are left for review.
      const first = await deliver(over(processingEvent));
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ result: 'ignored', reason: expect.stringContaining('exceed') });
      expect(await paymentOf(company, processing.id)).toMatchObject({ status: 'succeeded' });

      const books = await comparableBooksOf(db, company.companyId);
      expect(books.refunds).toEqual([]);
      expect(books.paidTotals).toEqual([GROSS, GROSS]);
      expect((await recorded(company)).map((row) => row.status)).toEqual(['ignored', 'ignored']);
    });

    it('a refund before the charge succeeded here completes the payment first; later events change nothing', async () => {
      const company = await api.newCompany();
      const payment = await aPayment(company, 'pm_card_lost_response');
      const charge = await chargeOf(payment.providerReference);
      await refund(charge.id, 1000);
      await refund(charge.id, 500);
      const events = await eventsOf(company);
      const [succeeded, firstRefund, secondRefund] = events;
      expect(events.map((event) => event.type)).toEqual([
        'charge.succeeded',
        'charge.refunded',
        'charge.refunded',
      ]);

      // Newest first: the last refund's event lists both refunds.
      expect((await deliver(secondRefund)).body).toMatchObject({ result: 'applied' });
      expect((await deliver(firstRefund)).body).toMatchObject({ result: 'applied' });
      expect((await deliver(succeeded)).body).toMatchObject({ result: 'applied' });

      expect(await paymentOf(company, payment.id)).toMatchObject({ status: 'succeeded' });
      const books = await comparableBooksOf(db, company.companyId);
      expect(books.refunds).toEqual([500, 1000]);
      expect(books.paidTotals).toEqual([GROSS - 1500]);
      expect(books.trialBalance).toContain(`provider_clearing ${GROSS}/1500`);
    });
  });

  describe('payout.paid', () => {
    async function payOut(company: TestCompany): Promise<{ id: string; feeAmount: number }> {
      const response = await provider.call('POST', '/v1/payouts', { body: { companyId: company.companyId } });
      expect(response.status).toBe(201);
      return (response.body as { data: Array<{ id: string; feeAmount: number }> }).data[0];
    }

    it('becomes one settlement from provider clearing; a pushed settlement of the payout then conflicts', async () => {
      const company = await api.newCompany();
      const first = await aPayment(company, 'pm_card_visa');
      await aPayment(company, 'pm_card_visa');
      const payout = await payOut(company);
      const [paid] = await eventsOf(company, 'payout.paid');

      expect((await deliver(paid)).body).toEqual({ duplicate: false, result: 'applied' });
      expect((await deliver(paid)).body).toEqual({ duplicate: true, result: 'duplicate' });

      const books = await comparableBooksOf(db, company.companyId);
      expect(books.settlements).toEqual([`${2 * GROSS} fee ${payout.feeAmount} provider`]);
      expect(books.paidTotals).toEqual([GROSS, GROSS]);
      expect(books.trialBalance).toEqual([
        `accounts_receivable ${2 * GROSS}/${2 * GROSS}`,
        `bank ${2 * GROSS - payout.feeAmount}/0`,
        `payment_fees ${payout.feeAmount}/0`,
        `provider_clearing ${2 * GROSS}/${2 * GROSS}`,
        'revenue 0/20000',
        'vat_payable 0/4200',
      ]);
      const pushed = await api.http
        .post('/v1/settlements/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey('settle'))
        .send({
          payoutId: payout.id,
          currency: 'EUR',
          paidAt: new Date().toISOString(),
          allocations: [{ invoiceId: first.invoiceId, amount: 1 }],
        });
      expect(pushed.status).toBe(409);
      expect(pushed.body).toMatchObject({
        code: 'payout_already_settled',
        existingSettlementId: expect.any(String),
      });
    });

    it('before its charges succeeded here it is parked, then applied by the retry once they have', async () => {
      const company = await api.newCompany();
      await aPayment(company, 'pm_card_lost_response');
      await payOut(company);
      const [succeeded] = await eventsOf(company, 'charge.succeeded');
      const [paid] = await eventsOf(company, 'payout.paid');

      const early = await deliver(paid);
      expect(early.body).toMatchObject({ duplicate: false, result: 'parked' });
      expect(await recorded(company)).toEqual([{ event_id: paid.id, status: 'parked' }]);
      // Parked means recorded: the provider's retry is a duplicate.
      expect((await deliver(paid)).body).toEqual({ duplicate: true, result: 'duplicate' });
      expect((await deliver(succeeded)).body).toMatchObject({ result: 'applied' });

      const receiver = api.app.get(ReceiveProviderEventHandler);
      await eventually(
        async () => {
          await receiver.retryParked();
          return recorded(company);
        },
        (rows) => rows.every((row) => row.status === 'applied'),
        10_000,
        150,
      );
      const books = await comparableBooksOf(db, company.companyId);
      expect(books.settlements).toHaveLength(1);
      expect(books.trialBalance).toContain(`provider_clearing ${GROSS}/${GROSS}`);
    });
    it('another currency or a fee above its total: recorded ignored with the reason, never a 5xx; zero-amount charges are left out', async () => {
      const company = await api.newCompany();
      await aPayment(company, 'pm_card_visa');
      await payOut(company);
      const [paid] = await eventsOf(company, 'payout.paid');
      const variant = (suffix: string, data: Record<string, unknown>): SandboxEvent => ({
        ...paid,
        id: `${paid.id}_${suffix}`,
        data: { ...paid.data, id: `${paid.data.id}_${suffix}`, ...data },
      });
      const inUsd = variant('usd', { currency: 'USD' });
      const feeAbove = variant('fee', { feeAmount: GROSS + 1 });
      const withZero = variant('zero', { charges: [...paid.data.charges, { id: 'ch_nothing', amount: 0 }] });

      const usd = await deliver(inUsd);
      expect(usd.status).toBe(200);
      expect(usd.body).toMatchObject({
        duplicate: false,
        result: 'ignored',
        reason: expect.stringMatching(/USD.*EUR/),
      });
      const fee = await deliver(feeAbove);
      expect(fee.status).toBe(200);
      expect(fee.body).toMatchObject({
        result: 'ignored',
        reason: expect.stringContaining(`fee of ${GROSS + 1}`),
      });
      // Recorded: the provider's redelivery is a duplicate, not a loop.
      expect((await deliver(inUsd)).body).toEqual({ duplicate: true, result: 'duplicate' });
      expect((await deliver(withZero)).body).toEqual({ duplicate: false, result: 'applied' });

      const statuses = new Map((await recorded(company)).map((row) => [row.event_id, row.status]));
      expect([statuses.get(inUsd.id), statuses.get(feeAbove.id), statuses.get(withZero.id)]).toEqual([
        'ignored',
        'ignored',
        'applied',
      ]);
      const books = await comparableBooksOf(db, company.companyId);
      expect(books.settlements).toEqual([`${GROSS} fee ${paid.data.feeAmount} provider`]);
      expect(books.paidTotals).toEqual([GROSS]);
    });
  });

  describe('refusals: nothing recorded, never a 5xx', () => {
    async function aSignedEvent(company: TestCompany): Promise<SandboxEvent> {
      await aPayment(company, 'pm_card_lost_response');
      return (await eventsOf(company, 'charge.succeeded'))[0];
    }

    it('a bad signature → 401 provider_signature_invalid', async () => {
      const company = await api.newCompany();
      const event = await aSignedEvent(company);
      const body = eventBody(event);
      const headers = signedHeaders('whsec_' + Buffer.alloc(32, 7).toString('base64'), event.id, body);

      const response = await api.http.post(RECEIVER).set(headers).send(body);

      expect(response.status).toBe(401);
      expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(response.body).toMatchObject({ code: 'provider_signature_invalid' });
      const unsigned = await api.http.post(RECEIVER).set('content-type', 'application/json').send(body);
      expect(unsigned.status).toBe(401);
      // A signed body changed after signing.
      const tampered = await api.http
        .post(RECEIVER)
        .set(signedHeaders(sandbox.webhookSecret, event.id, body))
        .send(body.replace(String(GROSS), '1'));
      expect(tampered.status).toBe(401);
      expect(await recorded(company)).toEqual([]);
    });

    it('a stale timestamp → 401', async () => {
      const company = await api.newCompany();
      const event = await aSignedEvent(company);

      const response = await deliver(event, new Date(Date.now() - 10 * 60_000));

      expect(response.status).toBe(401);
      expect(response.body).toMatchObject({ code: 'provider_signature_invalid' });
      expect(await recorded(company)).toEqual([]);
    });

    it('an unknown event type → 422 provider_event_type_unknown', async () => {
      const company = await api.newCompany();
      const event = await aSignedEvent(company);

      const response = await deliver({ ...event, id: `evt_${randomUUID()}`, type: 'charge.disputed' });

      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({ code: 'provider_event_type_unknown' });
      expect(await recorded(company)).toEqual([]);
    });

    it.each([
      ['data missing', (event: SandboxEvent) => ({ ...event, data: undefined })],
      ['a negative amount', (event: SandboxEvent) => ({ ...event, data: { ...event.data, amount: -5 } })],
      [
        'an amount as a string',
        (event: SandboxEvent) => ({ ...event, data: { ...event.data, amount: '12100' } }),
      ],
      ['no reference', (event: SandboxEvent) => ({ ...event, data: { ...event.data, reference: '' } })],
      ['an unreadable createdAt', (event: SandboxEvent) => ({ ...event, createdAt: 'yesterday' })],
    ])('a malformed event (%s) → 400 provider_event_invalid', async (_name, mangle) => {
      const company = await api.newCompany();
      const event = mangle(await aSignedEvent(company));
      const body = JSON.stringify(event);

      const response = await api.http
        .post(RECEIVER)
        .set(signedHeaders(sandbox.webhookSecret, event.id, body))
        .send(body);

      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'provider_event_invalid' });
      expect(await recorded(company)).toEqual([]);
    });

    it('malformed JSON → 400 malformed_json; a body that is not an object → 400; another provider → 404', async () => {
      const broken = await api.http.post(RECEIVER).set('content-type', 'application/json').send('{"id": ');
      expect(broken.status).toBe(400);
      expect(broken.body).toMatchObject({ code: 'malformed_json' });
      const list = '[1,2]';
      const notAnObject = await api.http
        .post(RECEIVER)
        .set(signedHeaders(sandbox.webhookSecret, 'evt_x', list))
        .send(list);
      expect(notAnObject.status).toBe(400);
      expect(notAnObject.body).toMatchObject({ code: 'provider_event_invalid' });
      const other = await api.http.post('/v1/providers/stripe/events').send({});
      expect(other.status).toBe(404);
      const weird = await api.http.post('/v1/providers/Not%20A%20Provider/events').send({});
      expect(weird.status).toBe(404);
    });

    it('an event of no company here is acknowledged and ignored (not recorded)', async () => {
      const event: SandboxEvent = {
        id: `evt_${randomUUID()}`,
        type: 'charge.succeeded',
        createdAt: new Date().toISOString(),
        data: {
          id: 'ch_outside',
          reference: 'made-elsewhere',
          amount: 500,
          currency: 'EUR',
          status: 'succeeded',
          failureCode: null,
          refundedAmount: 0,
          refunds: [],
          metadata: {},
        },
      };
      const response = await deliver(event);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ duplicate: false, result: 'ignored' });
      const { rows } = await db.query(`SELECT 1 FROM provider_events WHERE event_id = $1`, [event.id]);
      expect(rows).toEqual([]);
    });
  });

  describe('reconciliation', () => {
    function runReconciliation(
      company: TestCompany,
      from: Date,
      to: Date,
      key = newKey('recon'),
    ): Promise<Response> {
      return api.http
        .post('/v1/reconciliation/runs/create')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send({ from: from.toISOString(), to: to.toISOString() });
    }

    it('finds planted discrepancies and classifies them; fixes the safe ones through the event paths', async () => {
      const company = await api.newCompany();
      const from = new Date(Date.now() - 60_000);
      // 1. A payment the provider charged but whose answer and event never arrived: processing here.
      const processing = await aPayment(company, 'pm_card_lost_response');
      // 2. A succeeded payment whose charge the sandbox then dropped.
      const dropped = await aPayment(company, 'pm_card_visa');
      await provider.call('DELETE', `/_sandbox/charges/${dropped.providerChargeId}`);
      // 3. A charge made behind ledgerkey's back, for this company.
      const planted = await provider.call('POST', '/_sandbox/charges', {
        body: {
          reference: `behind-${randomUUID()}`,
          amount: 777,
          currency: 'EUR',
          metadata: { companyId: company.companyId },
        },
      });
      expect(planted.status).toBe(201);
      // 4. A refund made at the provider whose event never arrived.
      const refunded = await aPayment(company, 'pm_card_visa');
      const refund = await provider.call('POST', `/v1/charges/${refunded.providerChargeId}/refunds`, {
        body: { amount: 100 },
        idempotencyKey: randomUUID(),
      });
      expect(refund.status).toBe(201);
      const to = new Date(Date.now() + 60_000);
      const key = newKey('recon');

      const response = await runReconciliation(company, from, to, key);

      expect(response.status).toBe(201);
      const run = response.body as {
        id: string;
        status: string;
        discrepancies: Array<Record<string, unknown>>;
        summary: Record<string, number>;
      };
      expect(run.status).toBe('completed');
      const byKind = run.discrepancies.map((d) => `${d.kind} ${d.objectType} ${d.resolution}`).sort();
      expect(byKind).toEqual(
        [
          'missing_at_provider charge needs_review',
          'missing_locally charge needs_review',
          'missing_locally refund auto_resolved',
          'status_mismatch charge auto_resolved',
        ].sort(),
      );
      expect(run.discrepancies).toContainEqual(
        expect.objectContaining({
          kind: 'missing_locally',
          providerObjectId: planted.body.id,
          localId: null,
        }),
      );
      expect(run.discrepancies).toContainEqual(
        expect.objectContaining({ kind: 'missing_at_provider', localId: dropped.id }),
      );
      expect(run.summary).toMatchObject({ autoResolved: 2, needsReview: 2 });
      expect(await paymentOf(company, processing.id)).toMatchObject({ status: 'succeeded' });
      expect((await comparableBooksOf(db, company.companyId)).refunds).toEqual([100]);

      const replay = await runReconciliation(company, from, to, key);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(response.text);
      const read = await api.http.get(`/v1/reconciliation/runs/${run.id}`).set(company.auth);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(run);

      // A second run finds only what needs a person; the fixed cases stay fixed.
      const again = await runReconciliation(company, from, to);
      const second = (again.body as typeof run).discrepancies;
      expect(second.map((d) => `${d.kind} ${d.resolution}`).sort()).toEqual([
        'missing_at_provider needs_review',
        'missing_locally needs_review',
      ]);
      const firstSeen = run.discrepancies.find((d) => d.kind === 'missing_at_provider')?.firstSeenAt;
      expect(second.find((d) => d.kind === 'missing_at_provider')?.firstSeenAt).toBe(firstSeen);

      const metrics = await scrape(api.baseUrl);
      expect(
        sampleValue(metrics, 'ledgerkey_reconciliation_open_discrepancies', { kind: 'missing_locally' }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        sampleValue(metrics, 'ledgerkey_reconciliation_oldest_open_discrepancy_age_seconds', {}),
      ).toBeGreaterThan(0);
    });

    it('imports a payout whose event never arrived; a matching books report nothing', async () => {
      const company = await api.newCompany();
      const from = new Date(Date.now() - 60_000);
      await aPayment(company, 'pm_card_visa');
      const payout = await provider.call('POST', '/v1/payouts', { body: { companyId: company.companyId } });
      expect(payout.status).toBe(201);
      const to = new Date(Date.now() + 60_000);

      const first = await runReconciliation(company, from, to);
      expect((first.body as { discrepancies: unknown[] }).discrepancies).toEqual([
        expect.objectContaining({
          kind: 'missing_locally',
          objectType: 'payout',
          resolution: 'auto_resolved',
        }),
      ]);
      expect((await comparableBooksOf(db, company.companyId)).settlements).toHaveLength(1);
      // The late event finds the payout settled: recorded, nothing booked twice.
      const [paid] = await eventsOf(company, 'payout.paid');
      expect((await deliver(paid)).body).toMatchObject({ result: 'applied' });
      expect((await comparableBooksOf(db, company.companyId)).settlements).toHaveLength(1);

      const second = await runReconciliation(company, from, to);
      expect(second.status).toBe(201);
      expect(second.body).toMatchObject({ status: 'completed', discrepancies: [] });
    });

    it('a pushed settlement of a payout that pays out payments here is reported, not booked twice', async () => {
      const company = await api.newCompany();
      const from = new Date(Date.now() - 60_000);
      await aPayment(company, 'pm_card_visa');
      const other = await anIssuedInvoice(company);
      const created = await provider.call('POST', '/v1/payouts', { body: { companyId: company.companyId } });
      expect(created.status).toBe(201);
      const payout = (created.body as { data: Array<{ id: string; feeAmount: number }> }).data[0];
      const to = new Date(Date.now() + 60_000);
      // The payout's money pushed as well: the payment raised its invoice's paid total already.
      const pushed = await api.http
        .post('/v1/settlements/create')
        .set(company.auth)
        .set('Idempotency-Key', newKey('settle'))
        .send({
          payoutId: payout.id,
          currency: 'EUR',
          paidAt: new Date().toISOString(),
          feeAmount: payout.feeAmount,
          allocations: [{ invoiceId: other, amount: GROSS }],
        });
      expect(pushed.status).toBe(201);
      const settlementId = (pushed.body as { id: string }).id;

      const [paid] = await eventsOf(company, 'payout.paid');
      const received = await deliver(paid);
      expect(received.status).toBe(200);
      expect(received.body).toMatchObject({
        duplicate: false,
        result: 'ignored',
        reason: expect.stringContaining(settlementId),
      });
      expect(await recorded(company)).toEqual([{ event_id: paid.id, status: 'ignored' }]);

      const run = await runReconciliation(company, from, to);
      expect(run.status).toBe(201);
      expect((run.body as { discrepancies: unknown[] }).discrepancies).toEqual([
        expect.objectContaining({
          kind: 'status_mismatch',
          resolution: 'needs_review',
          objectType: 'payout',
          providerObjectId: payout.id,
          localId: settlementId,
        }),
      ]);
      expect((await comparableBooksOf(db, company.companyId)).settlements).toHaveLength(1);
    });

    it('refuses a bad range; an unknown run is 404', async () => {
      const company = await api.newCompany();
      const backwards = await runReconciliation(company, new Date(), new Date(Date.now() - 1000));
      expect(backwards.status).toBe(400);
      expect(backwards.body).toMatchObject({ code: 'validation_failed' });
      const missing = await api.http.get(`/v1/reconciliation/runs/${randomUUID()}`).set(company.auth);
      expect(missing.status).toBe(404);
    });
  });

  it('counts inbound events by result', async () => {
    const company = await api.newCompany();
    await aPayment(company, 'pm_card_lost_response');
    const [succeeded] = await eventsOf(company, 'charge.succeeded');
    const before = await scrape(api.baseUrl);
    await deliver(succeeded);
    await deliver(succeeded);
    await deliver(succeeded, new Date(Date.now() - 3_600_000));
    const after = await scrape(api.baseUrl);
    const delta = (result: string): number =>
      (sampleValue(after, 'ledgerkey_provider_events_total', { result }) ?? 0) -
      (sampleValue(before, 'ledgerkey_provider_events_total', { result }) ?? 0);
    expect([delta('applied'), delta('duplicate'), delta('rejected')]).toEqual([1, 1, 1]);
  });
});
