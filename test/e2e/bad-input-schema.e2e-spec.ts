import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import {
  badInputCalls,
  CUSTOMER,
  expectFieldError,
  expectProblem,
  type Problem,
  valid,
  withCustomer,
  withLine,
} from '../support/bad-input-requests';
import { anInvoice, type InvoiceBuilder, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

describe('bad input never yields a 5xx', () => {
  let t: TestApp;
  let db: Pool;

  beforeAll(async () => {
    t = await startTestApp();
    db = testDatabasePool();
  });

  afterAll(async () => {
    await t?.close();
    await db?.end();
  });

  const { create, expectNothingStored } = badInputCalls(() => ({ t, db }));

  describe('schema violations → 400 validation_failed naming the field', () => {
    const manyLines = (count: number) => {
      const builder = anInvoice().withOrderId();
      for (let i = 0; i < count; i += 1) builder.withLine({ description: `Line ${i + 1}` });
      return builder;
    };

    it.each<{ name: string; body: InvoiceBuilder; after?: Record<string, unknown>; field: string }>([
      { name: 'unknown top-level field', body: valid().with({ discount: 10 }), field: 'discount' },
      { name: 'unknown customer field', body: withCustomer({ iban: 'LT12' }), field: 'customer.iban' },
      { name: 'unknown line field', body: withLine({ vatAmount: 2100 }), field: 'lines[0].vatAmount' },
      {
        name: 'unitPrice as a string "5000"',
        body: withLine({ unitPrice: '5000' }),
        field: 'lines[0].unitPrice',
      },
      { name: 'quantity as a number 2', body: withLine({ quantity: 2 }), field: 'lines[0].quantity' },
      { name: 'vatRate as a number 21', body: withLine({ vatRate: 21 }), field: 'lines[0].vatRate' },
      { name: 'lines not an array', body: valid().with({ lines: 'Consulting' }), field: 'lines' },
      { name: 'lines an object', body: valid(), after: { lines: { 0: {} } }, field: 'lines' },
      { name: 'lines missing', body: valid(), after: { lines: undefined }, field: 'lines' },
      { name: 'a line that is an empty array', body: valid(), after: { lines: [[]] }, field: 'lines' },
      {
        name: 'a line wrapped in an array',
        body: valid(),
        after: { lines: [[{ description: 'Consulting', quantity: '2', unitPrice: 5000, vatRate: '21' }]] },
        field: 'lines',
      },
      { name: 'a null line', body: valid().with({ lines: [null] }), field: 'lines[0]' },
      { name: 'customer null', body: valid().with({ customer: null }), field: 'customer' },
      { name: 'customer a string', body: valid().with({ customer: 'UAB Pirkėjas' }), field: 'customer' },
      { name: 'customer missing', body: valid().without('customer'), field: 'customer' },
      { name: 'customer an empty array', body: valid().with({ customer: [] }), field: 'customer' },
      {
        name: 'customer wrapped in an array',
        body: valid().with({ customer: [CUSTOMER] }),
        field: 'customer',
      },
      {
        name: 'customer.name missing',
        body: valid().with({ customer: { countryCode: 'LT' } }),
        field: 'customer.name',
      },
      { name: 'customer.name empty', body: withCustomer({ name: '' }), field: 'customer.name' },
      {
        name: 'customer.name over 200 characters',
        body: withCustomer({ name: 'n'.repeat(201) }),
        field: 'customer.name',
      },
      { name: 'quantity "0"', body: withLine({ quantity: '0' }), field: 'lines[0].quantity' },
      { name: 'quantity "-1"', body: withLine({ quantity: '-1' }), field: 'lines[0].quantity' },
      { name: 'quantity "1e3"', body: withLine({ quantity: '1e3' }), field: 'lines[0].quantity' },
      { name: 'quantity "1.23456"', body: withLine({ quantity: '1.23456' }), field: 'lines[0].quantity' },
      { name: 'quantity " 2"', body: withLine({ quantity: ' 2' }), field: 'lines[0].quantity' },
      { name: 'quantity ""', body: withLine({ quantity: '' }), field: 'lines[0].quantity' },
      { name: 'quantity "1,5"', body: withLine({ quantity: '1,5' }), field: 'lines[0].quantity' },
      { name: 'quantity "Infinity"', body: withLine({ quantity: 'Infinity' }), field: 'lines[0].quantity' },
      {
        name: 'quantity "1000000001"',
        body: withLine({ quantity: '1000000001' }),
        field: 'lines[0].quantity',
      },
      { name: 'vatRate "101"', body: withLine({ vatRate: '101' }), field: 'lines[0].vatRate' },
      { name: 'vatRate "21.001"', body: withLine({ vatRate: '21.001' }), field: 'lines[0].vatRate' },
      { name: 'vatRate "-1"', body: withLine({ vatRate: '-1' }), field: 'lines[0].vatRate' },
      { name: 'vatRate "21%"', body: withLine({ vatRate: '21%' }), field: 'lines[0].vatRate' },
      { name: 'unitPrice 10^12 + 1', body: withLine({ unitPrice: 1e12 + 1 }), field: 'lines[0].unitPrice' },
      { name: 'unitPrice 1.5', body: withLine({ unitPrice: 1.5 }), field: 'lines[0].unitPrice' },
      { name: 'unitPrice -1', body: withLine({ unitPrice: -1 }), field: 'lines[0].unitPrice' },
      { name: 'unitPrice 1e300', body: withLine({ unitPrice: 1e300 }), field: 'lines[0].unitPrice' },
      { name: 'unitPrice null', body: withLine({ unitPrice: null }), field: 'lines[0].unitPrice' },
      { name: 'description empty', body: withLine({ description: '' }), field: 'lines[0].description' },
      {
        name: 'description over 1000 characters',
        body: withLine({ description: 'd'.repeat(1001) }),
        field: 'lines[0].description',
      },
      { name: '0 lines', body: valid(), after: { lines: [] }, field: 'lines' },
      { name: '501 lines', body: manyLines(501), field: 'lines' },
      {
        name: 'an invalid second line',
        body: anInvoice().withOrderId().withLine().withLine({ quantity: '0' }),
        field: 'lines[1].quantity',
      },
      { name: 'countryCode "lt"', body: withCustomer({ countryCode: 'lt' }), field: 'customer.countryCode' },
      { name: 'countryCode "XX"', body: withCustomer({ countryCode: 'XX' }), field: 'customer.countryCode' },
      {
        name: 'countryCode "LTU"',
        body: withCustomer({ countryCode: 'LTU' }),
        field: 'customer.countryCode',
      },
      {
        name: 'vatId in lower case',
        body: withCustomer({ vatId: 'lt100001234567' }),
        field: 'customer.vatId',
      },
      {
        name: 'email not an address',
        body: withCustomer({ email: 'not-an-email' }),
        field: 'customer.email',
      },
      { name: 'currency "eur"', body: valid().with({ currency: 'eur' }), field: 'currency' },
      { name: 'currency "EURO"', body: valid().with({ currency: 'EURO' }), field: 'currency' },
      { name: 'currency "ABC" (not ISO 4217)', body: valid().with({ currency: 'ABC' }), field: 'currency' },
      { name: 'currency 978', body: valid().with({ currency: 978 }), field: 'currency' },
      { name: 'series "inv"', body: valid().with({ series: 'inv' }), field: 'series' },
      { name: 'series ""', body: valid().with({ series: '' }), field: 'series' },
      { name: 'orderId ""', body: valid().with({ orderId: '' }), field: 'orderId' },
      {
        name: 'orderId over 100 characters',
        body: valid().with({ orderId: 'o'.repeat(101) }),
        field: 'orderId',
      },
      { name: 'issueDate "2026-02-30"', body: valid().with({ issueDate: '2026-02-30' }), field: 'issueDate' },
      { name: 'issueDate "30.11.2026"', body: valid().with({ issueDate: '30.11.2026' }), field: 'issueDate' },
      {
        name: 'issueDate with a time',
        body: valid().with({ issueDate: '2026-11-30T00:00:00Z' }),
        field: 'issueDate',
      },
      { name: 'dueDate "2026-13-01"', body: valid().with({ dueDate: '2026-13-01' }), field: 'dueDate' },
      { name: 'notes over 2000 characters', body: valid().with({ notes: 'n'.repeat(2001) }), field: 'notes' },
    ])('$name', async ({ body, after, field }) => {
      const company = await t.newCompany();
      const problem = expectProblem(
        await create(company, { ...body.build(), ...after }),
        400,
        'validation_failed',
      );
      expectFieldError(problem, field);
      await expectNothingStored(company);
    });

    it('currency "XXX" (an ISO 4217 code with no minor unit: "no currency") → 400 validation_failed', async () => {
      const company = await t.newCompany();
      const problem = expectProblem(
        await create(company, valid().with({ currency: 'XXX' }).build()),
        400,
        'validation_failed',
      );
      expectFieldError(problem, 'currency');
      await expectNothingStored(company);
    });

    // JSON.parse reads `50.00` as 50: without a look at the text, 50 euros would be stored as 50 cents.
    it.each(['50.00', '5000.0'])(
      'unitPrice written as %s (whole, but a decimal) → 400 naming minor units; nothing stored',
      async (literal) => {
        const company = await t.newCompany();
        const json = JSON.stringify(withLine({ unitPrice: 5000 }).build()).replace(
          '"unitPrice":5000',
          `"unitPrice":${literal}`,
        );
        expect(json).toContain(`"unitPrice":${literal}`);
        const problem = expectProblem(await create(company, json), 400, 'validation_failed');
        expect(problem.errors).toEqual([
          {
            field: 'lines[0].unitPrice',
            message: `must be an integer number of minor units (cents: 5000 is 50.00 EUR), written without a decimal point; got ${literal}`,
          },
        ]);
        await expectNothingStored(company);
        // The same amount as an integer literal is an invoice line of 50 (or 5000) cents.
        const accepted = await create(company, json.replace(`"unitPrice":${literal}`, '"unitPrice":5000'));
        expect(accepted.status).toBe(201);
      },
    );

    it('every minor-unit amount of every create refuses a decimal: settlements, fees, payments', async () => {
      const company = await t.newCompany();
      const invoiceId = randomUUID();
      const post = (route: string, json: string) =>
        t.http
          .post(route)
          .set(company.auth)
          .set('Idempotency-Key', newKey())
          .set('Content-Type', 'application/json')
          .send(json);
      const answers = {
        allocation: await post(
          '/v1/settlements/create',
          `{"payoutId":"po_decimal","currency":"EUR","paidAt":"2026-11-30T12:00:00Z",` +
            `"allocations":[{"invoiceId":"${invoiceId}","amount":121.00}]}`,
        ),
        fee: await post(
          '/v1/settlements/create',
          `{"payoutId":"po_decimal","currency":"EUR","paidAt":"2026-11-30T12:00:00Z","feeAmount":1.00,` +
            `"allocations":[{"invoiceId":"${invoiceId}","amount":12100}]}`,
        ),
        payment: await post(
          '/v1/payments/create',
          `{"invoiceId":"${invoiceId}","paymentMethod":"pm_card_visa","amount":121.00}`,
        ),
      };
      const fieldsOf = (response: Response) =>
        (response.body as Problem).errors
          ?.filter((error) => error.message.includes('minor units'))
          .map((error) => error.field);
      expect({
        allocation: fieldsOf(answers.allocation),
        fee: fieldsOf(answers.fee),
        payment: fieldsOf(answers.payment),
      }).toEqual({ allocation: ['allocations[0].amount'], fee: ['feeAmount'], payment: ['amount'] });
    });
  });
});
