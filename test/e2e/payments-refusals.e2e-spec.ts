import { randomUUID } from 'node:crypto';
import type { RunningProviderSandbox } from '@ledgerkey/payments';
import type { Pool } from 'pg';
import { newKey } from '../support/invoice.builder';
import { paymentBooksOf } from '../support/payment-books';
import { CREATE, GROSS, paymentCalls } from '../support/payment-calls';
import type { SandboxHttp } from '../support/provider-sandbox';
import { startSandboxApp, stopSandboxApp } from '../support/sandbox-app';
import type { TestApp } from '../support/test-app';

jest.setTimeout(60_000);

/**
 * Payments through the real provider sandbox process: requests the API refuses (unknown or
 * foreign invoices, amounts above what is owed, bad and hostile bodies) charge nothing.
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

  const { anIssuedInvoice, pay, counters } = paymentCalls(() => ({ sandbox, provider, api, db }));

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
});
