import { randomUUID } from 'node:crypto';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { paymentBooksOf, paymentEntryOf } from '../support/payment-books';
import { GROSS, paymentCalls } from '../support/payment-calls';
import type { SandboxHttp } from '../support/provider-sandbox';
import { startSandboxApp, stopSandboxApp } from '../support/sandbox-app';
import { aSettlement } from '../support/settlement.builder';
import type { TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/**
 * Payments through the real provider sandbox process: concurrent requests, settlements beside a
 * processing payment, and the schema that keeps a payment immutable but for its outcome.
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
});
