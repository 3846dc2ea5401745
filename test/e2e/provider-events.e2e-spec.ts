import { randomUUID } from 'node:crypto';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { newKey } from '../support/invoice.builder';
import { sampleValue } from '../support/prometheus';
import {
  GROSS,
  type Payment,
  providerEventCalls,
  startProviderEventsRig,
} from '../support/provider-event-calls';
import { comparableBooksOf, type SandboxEvent, scrape } from '../support/provider-events';
import type { SandboxHttp } from '../support/provider-sandbox';
import { stopSandboxApp } from '../support/sandbox-app';
import type { TestApp } from '../support/test-app';

jest.setTimeout(60_000);

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
    ({ sandbox, provider, api, db } = await startProviderEventsRig());
  });

  afterAll(async () => {
    await stopSandboxApp({ api, db });
  });

  const { deliver, anIssuedInvoice, aPayment, eventsOf, chargeOf, recorded, paymentOf, countOf } =
    providerEventCalls(() => ({ sandbox, provider, api, db }));

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
