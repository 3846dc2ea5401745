import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey, type InvoiceBuilder, type LineInput } from '../support/invoice.builder';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const CREATE = '/v1/sales/invoices/create';
const CUSTOMER = { name: 'UAB Pirkėjas', countryCode: 'LT', vatId: 'LT100001234567' };
const PROBLEM_FIELDS = ['code', 'detail', 'requestId', 'status', 'title', 'type'];

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId: string;
  errors?: Array<{ field: string; message: string }>;
  [extension: string]: unknown;
}

/** Every error answer: RFC 9457 problem+json with the documented members and a stable code. */
function expectProblem(response: Response, status: number, code: string): Problem {
  expect({ status: response.status, code: (response.body as { code?: unknown })?.code }).toEqual({
    status,
    code,
  });
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(response.text) as Problem;
  expect(problem).toEqual(
    expect.objectContaining({
      type: expect.stringMatching(/^https?:\/\/\S+$/),
      title: expect.stringMatching(/\S/),
      status: response.status,
      detail: expect.stringMatching(/\S/),
      code,
      requestId: expect.stringMatching(/\S/),
    }),
  );
  expect(response.headers['x-request-id']).toBe(problem.requestId);
  if (code === 'validation_failed') {
    // The contract: every validation_failed names what is wrong.
    expect(problem.errors).toEqual(expect.arrayContaining([expect.anything()]));
    for (const error of problem.errors ?? [])
      expect(error).toEqual({ field: expect.any(String), message: expect.stringMatching(/\S/) });
  }
  return problem;
}

function expectFieldError(problem: Problem, field: string): void {
  expect(problem.errors).toEqual(expect.any(Array));
  for (const error of problem.errors ?? []) {
    expect(error).toEqual({ field: expect.any(String), message: expect.stringMatching(/\S/) });
  }
  expect(problem.errors?.map((error) => error.field)).toContain(field);
}

/** A valid invoice with one line changed (fields of any type, to send what a typed client cannot). */
function withLine(fields: Record<string, unknown>): InvoiceBuilder {
  return anInvoice()
    .withOrderId()
    .withLine(fields as Partial<LineInput>);
}

function withCustomer(fields: Record<string, unknown>): InvoiceBuilder {
  return anInvoice()
    .withOrderId()
    .withLine()
    .with({ customer: { ...CUSTOMER, ...fields } });
}

function valid(): InvoiceBuilder {
  return anInvoice().withOrderId().withLine();
}

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

  function create(company: TestCompany, body: object | string, key = newKey()) {
    const request = t.http.post(CREATE).set(company.auth).set('Idempotency-Key', key);
    if (typeof body === 'string') return request.set('Content-Type', 'application/json').send(body);
    return request.send(body);
  }

  async function storedFor(company: TestCompany): Promise<Record<string, number>> {
    const { rows } = await db.query<Record<string, number>>(
      `SELECT (SELECT count(*)::int FROM invoices WHERE company_id = $1) AS invoices,
              (SELECT count(*)::int FROM invoice_lines WHERE company_id = $1) AS "invoiceLines",
              (SELECT count(*)::int FROM journal_entries WHERE company_id = $1) AS "journalEntries",
              (SELECT count(*)::int FROM document_sequences WHERE company_id = $1) AS sequences,
              (SELECT count(*)::int FROM idempotency_records WHERE company_id = $1) AS "idempotencyRecords"`,
      [company.companyId],
    );
    return rows[0];
  }

  async function expectNothingStored(company: TestCompany): Promise<void> {
    expect(await storedFor(company)).toEqual({
      invoices: 0,
      invoiceLines: 0,
      journalEntries: 0,
      sequences: 0,
      idempotencyRecords: 0,
    });
  }

  describe('unparseable bodies → 400 malformed_json', () => {
    it.each([
      ['truncated JSON', '{"customer": {"name": "UAB Pirkėjas"'],
      ['a trailing comma', '{"customer": {}, "lines": [],}'],
      ['single quotes', "{'lines': []}"],
      ['a bare word', 'invoice'],
      ['NaN as a value', '{"lines": [{"unitPrice": NaN}]}'],
      ['a JSON string', '"invoice"'],
      ['JSON null', 'null'],
      ['a JSON number', '42'],
      ['a NUL character in a string', JSON.stringify(valid().with({ notes: 'before\u0000after' }).build())],
      ['a NUL character in a member name', '{"lines\\u0000": []}'],
      [
        'a lone surrogate in a description',
        JSON.stringify(valid().build()).replace('"Consulting"', '"Consulting \\ud800"'),
      ],
      [
        'a lone low surrogate in the customer name',
        JSON.stringify(withCustomer({ name: 'x' }).build()).replace('"x"', '"\\udc00"'),
      ],
    ])('%s', async (_name, raw) => {
      const company = await t.newCompany();
      const response = await create(company, raw);
      expectProblem(response, 400, 'malformed_json');
      await expectNothingStored(company);
    });
  });

  it('a body over REQUEST_BODY_LIMIT_BYTES (1 MiB) → 413 payload_too_large', async () => {
    const company = await t.newCompany();
    const body = valid()
      .with({ notes: 'x'.repeat(1_100_000) })
      .build();
    const response = await create(company, body);
    expectProblem(response, 413, 'payload_too_large');
    await expectNothingStored(company);
  });

  describe('bodies that are JSON but not an object → 400', () => {
    it.each([
      ['an empty JSON array', '[]'],
      ['an array holding a valid invoice', JSON.stringify([valid().build()])],
    ])('%s → validation_failed', async (_name, raw) => {
      const company = await t.newCompany();
      const response = await create(company, raw);
      expect(expectProblem(response, 400, 'validation_failed').errors).toEqual([
        { field: 'body', message: 'must be a JSON object' },
      ]);
      await expectNothingStored(company);
    });

    it('no body at all → validation_failed', async () => {
      const company = await t.newCompany();
      const response = await t.http.post(CREATE).set(company.auth).set('Idempotency-Key', newKey());
      expectFieldError(expectProblem(response, 400, 'validation_failed'), 'body');
      await expectNothingStored(company);
    });

    it('the same on the operators\' route: an array for POST /admin/companies names body, not "0"', async () => {
      const response = await t.http
        .post('/admin/companies')
        .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .set('Idempotency-Key', newKey())
        .set('Content-Type', 'application/json')
        .send('[{"name":"UAB Pardavėjas","countryCode":"LT","currency":"EUR"}]');
      expect(expectProblem(response, 400, 'validation_failed').errors).toEqual([
        { field: 'body', message: 'must be a JSON object' },
      ]);
    });

    it('an empty object → validation_failed naming customer and lines', async () => {
      const company = await t.newCompany();
      const problem = expectProblem(await create(company, {}), 400, 'validation_failed');
      expectFieldError(problem, 'customer');
      expectFieldError(problem, 'lines');
      await expectNothingStored(company);
    });
  });

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

  describe('business rules → 422, stored under the key, and nothing else', () => {
    async function expectStoredRejection(
      company: TestCompany,
      key: string,
      response: Response,
    ): Promise<void> {
      expect(await storedFor(company)).toEqual({
        invoices: 0,
        invoiceLines: 0,
        journalEntries: 0,
        sequences: 0,
        idempotencyRecords: 1,
      });
      const { rows } = await db.query(
        'SELECT response_status, response_body FROM idempotency_records WHERE company_id = $1 AND idempotency_key = $2',
        [company.companyId, key],
      );
      expect(rows).toEqual([{ response_status: response.status, response_body: response.text }]);
    }

    it('dueDate before issueDate → 422 due_date_before_issue_date', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = valid().with({ issueDate: '2026-11-30', dueDate: '2026-11-29' }).build();
      const response = await create(company, body, key);
      expectProblem(response, 422, 'due_date_before_issue_date');
      await expectStoredRejection(company, key, response);
    });

    it.each([
      [
        'quantity "1000000000" × unitPrice 10^12 (line net 10^21)',
        withLine({ quantity: '1000000000', unitPrice: 1e12 }),
      ],
      [
        'two lines each in range whose sum is not',
        anInvoice()
          .withOrderId()
          .withLine({ quantity: '9000', unitPrice: 1e12 })
          .withLine({ quantity: '9000', unitPrice: 1e12 }),
      ],
      ['a net in range whose gross is not', withLine({ quantity: '9000', unitPrice: 1e12, vatRate: '100' })],
    ])('%s → 422 amount_out_of_range, never 500', async (_name, builder) => {
      const company = await t.newCompany();
      const key = newKey();
      const response = await create(company, builder.build(), key);
      expectProblem(response, 422, 'amount_out_of_range');
      await expectStoredRejection(company, key, response);
    });
  });

  describe('authentication → 401 unauthorized, before anything else', () => {
    it.each([
      ['missing', undefined],
      ['not a bearer token', 'Basic dXNlcjpwYXNz'],
      ['an unknown key', `Bearer lk_${randomUUID().replace(/-/g, '')}`],
      ['punctuation instead of a key', 'Bearer <script>!$%'],
      ['non-ASCII bytes', 'Bearer \u00ff\u00fe'],
      ['an over-long token', `Bearer ${'a'.repeat(300)}`],
      ['"Bearer" alone', 'Bearer'],
    ])('%s Authorization on create', async (_name, authorization) => {
      const orderId = `order-${randomUUID()}`;
      const request = t.http.post(CREATE).set('Idempotency-Key', newKey());
      if (authorization !== undefined) request.set('Authorization', authorization);
      expectProblem(
        await request.send(anInvoice().withOrderId(orderId).withLine().build()),
        401,
        'unauthorized',
      );
      const { rows } = await db.query('SELECT count(*)::int AS n FROM invoices WHERE order_id = $1', [
        orderId,
      ]);
      expect(rows[0].n).toBe(0);
    });

    it('missing Authorization and missing Idempotency-Key → 401, not 400', async () => {
      expectProblem(await t.http.post(CREATE).send(valid().build()), 401, 'unauthorized');
    });

    it.each([
      ['missing', undefined],
      ['garbage', 'Bearer not-a-key'],
    ])('%s Authorization on GET routes', async (_name, authorization) => {
      for (const path of ['/v1/sales/invoices', `/v1/sales/invoices/${randomUUID()}`, '/v1/ledger/entries']) {
        const request = t.http.get(path);
        if (authorization !== undefined) request.set('Authorization', authorization);
        expectProblem(await request, 401, 'unauthorized');
      }
    });
  });

  describe('reads', () => {
    it.each([
      ['a path id that is not a UUID', '/v1/sales/invoices/not-a-uuid'],
      ['a path id with SQL in it', `/v1/sales/invoices/${encodeURIComponent("1' OR '1'='1")}`],
      ['an unknown invoice id', `/v1/sales/invoices/${randomUUID()}`],
    ])('%s → 404 not_found', async (_name, path) => {
      const company = await t.newCompany();
      expectProblem(await t.http.get(path).set(company.auth), 404, 'not_found');
    });

    it("another company's invoice id → 404 not_found", async () => {
      const owner = await t.newCompany();
      const created = await create(owner, valid().build());
      expect(created.status).toBe(201);
      const other = await t.newCompany();
      const response = await t.http
        .get(`/v1/sales/invoices/${(created.body as { id: string }).id}`)
        .set(other.auth);
      expectProblem(response, 404, 'not_found');
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=101', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['startingAfter=xyz', 'startingAfter'],
      ['startingAfter=1&startingAfter=2', 'startingAfter'],
      ['unknown=1', 'unknown'],
    ])('GET /v1/sales/invoices?%s → 400 validation_failed', async (query, field) => {
      const company = await t.newCompany();
      const problem = expectProblem(
        await t.http.get(`/v1/sales/invoices?${query}`).set(company.auth),
        400,
        'validation_failed',
      );
      expectFieldError(problem, field);
    });

    it.each([
      ['GET', '/v1/sales/invoices/%ZZ'],
      ['GET', '/v1/sales/invoices/abc%'],
      ['GET', '/v1/sales/credit-notes/%E0%A4%A'],
      ['GET', '/v1/settlements/%C0%80'],
      ['GET', '/v1/purchases/invoices/%FF'],
      ['GET', '/v1/events/%ZZ'],
      ['GET', '/v1/webhook-endpoints/%ZZ'],
      ['GET', '/v1/webhook-endpoints/%D8%00/attempts'],
      ['POST', '/v1/webhook-endpoints/%ZZ/disable'],
    ])(
      '%s %s: a path id that is not percent-encoded UTF-8 → 400 naming the field "id"',
      async (method, path) => {
        const company = await t.newCompany();
        const request =
          method === 'GET' ? t.http.get(path) : t.http.post(path).set('Idempotency-Key', newKey());
        const problem = expectProblem(await request.set(company.auth), 400, 'validation_failed');
        expect(problem.errors).toEqual([
          { field: 'id', message: 'must be percent-encoded UTF-8 (as in RFC 3986)' },
        ]);
      },
    );

    it.each([
      ['GET', '/v1/nope/%ZZ'],
      ['GET', '/v1/sales/%ZZ'],
      ['PUT', '/v1/sales/invoices/%ZZ'],
      ['DELETE', '/v1/events/%ZZ'],
    ])('%s %s: no route takes that path → 404 not_found, whatever its encoding', async (method, path) => {
      const company = await t.newCompany();
      const request = t.http[method.toLowerCase() as 'get' | 'put' | 'delete'](path).set(company.auth);
      expectProblem(await request, 404, 'not_found');
    });

    it.each([
      ['/v1/sales/invoices?limit=%ZZ', 'limit'],
      ['/v1/events?startingAfter=%E0%A4%A', 'startingAfter'],
      ['/v1/settlements?%ZZ=1', '%ZZ'],
      ['/v1/webhook-endpoints?limit[gt]=1', 'limit[gt]'],
    ])('GET %s: a query parameter → 400 naming it (%s)', async (path, field) => {
      const company = await t.newCompany();
      expectFieldError(
        expectProblem(await t.http.get(path).set(company.auth), 400, 'validation_failed'),
        field,
      );
    });

    it('GET /v1/ledger/entries?limit=0 → 400 validation_failed', async () => {
      const company = await t.newCompany();
      const problem = expectProblem(
        await t.http.get('/v1/ledger/entries?limit=0').set(company.auth),
        400,
        'validation_failed',
      );
      expectFieldError(problem, 'limit');
    });
  });

  describe('unknown routes → 404 not_found', () => {
    it.each([
      ['GET', '/v1/nope'],
      ['GET', '/'],
      ['POST', '/v1/sales/invoices'],
      ['POST', '/v1/sales/invoices/create/extra'],
      ['PUT', `/v1/sales/invoices/${randomUUID()}`],
      ['PATCH', `/v1/sales/invoices/${randomUUID()}`],
      ['DELETE', `/v1/sales/invoices/${randomUUID()}`],
    ])('%s %s', async (method, path) => {
      const company = await t.newCompany();
      const request = t.http[method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete'](path).set(
        company.auth,
      );
      expectProblem(await request, 404, 'not_found');
    });
  });

  it('the body of every error carries exactly the documented members', async () => {
    const company = await t.newCompany();
    const responses = await Promise.all([
      create(company, '{'),
      create(company, valid().with({ currency: 'eur' }).build()),
      t.http.get('/v1/nope').set(company.auth),
      t.http.get('/v1/sales/invoices'),
    ]);
    for (const response of responses) {
      const problem = JSON.parse(response.text) as Problem;
      const extra = problem.code === 'validation_failed' ? ['errors'] : [];
      expect(Object.keys(problem).sort()).toEqual([...PROBLEM_FIELDS, ...extra].sort());
      expect(response.text).not.toMatch(/\bat [\w.<>]+ \(|node_modules|SyntaxError|QueryFailedError/);
    }
  });

  it('after all of it the service is ready, and a valid request still works', async () => {
    const ready = await t.http.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
    const company = await t.newCompany();
    const created = await create(company, valid().build());
    expect(created.status).toBe(201);
    expect(await storedFor(company)).toEqual({
      invoices: 1,
      invoiceLines: 1,
      journalEntries: 1,
      sequences: 1,
      idempotencyRecords: 1,
    });
  });
});
