import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import {
  badInputCalls,
  CREATE,
  expectFieldError,
  expectProblem,
  type Problem,
  PROBLEM_FIELDS,
  valid,
  withCustomer,
  withLine,
} from '../support/bad-input-requests';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp, type TestCompany } from '../support/test-app';
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

  const { create, storedFor, expectNothingStored } = badInputCalls(() => ({ t, db }));

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

  it.each([
    ['two bytes that are no character (\\xff\\xfe)', [0xff, 0xfe]],
    ['a truncated two-byte sequence', [0xc4]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['an encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80]],
  ])(
    'invalid UTF-8 in the customer name, %s → 400 malformed_json, not stored as U+FFFD',
    async (_name, bytes) => {
      const company = await t.newCompany();
      const [before, after] = JSON.stringify(withCustomer({ name: 'UAB NAME' }).build()).split('NAME');
      // fetch sends the bytes as they are (supertest would serialize a Buffer as JSON).
      const answer = await fetch(`${t.baseUrl}${CREATE}`, {
        method: 'POST',
        headers: { ...company.auth, 'Idempotency-Key': newKey(), 'Content-Type': 'application/json' },
        body: Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]),
      });
      const text = await answer.text();
      const headers: Record<string, string> = {};
      answer.headers.forEach((value, name) => (headers[name] = value));
      // What expectProblem reads of a supertest response.
      const response = {
        status: answer.status,
        headers,
        text,
        body: JSON.parse(text) as unknown,
      } as unknown as Response;
      expect(expectProblem(response, 400, 'malformed_json').detail).toMatch(/not valid UTF-8/);
      await expectNothingStored(company);
    },
  );

  describe('properties named like built-in object members (the pipe would drop them, not refuse them)', () => {
    const MESSAGE =
      'must not be named like a built-in object member (__proto__, constructor, prototype, toString, …)';
    /** A valid invoice's JSON with `member` added to the object `at` (raw text: `__proto__` stays a key). */
    const withMember = (at: 'body' | 'line' | 'metadata', member: string) => {
      const json = JSON.stringify(valid().build());
      if (at === 'line') return json.replace('"lines":[{', `"lines":[{${member},`);
      return json.replace(/^\{/, at === 'body' ? `{${member},` : `{"metadata":{"crm":"1",${member}},`);
    };

    it.each([
      ['body', '"__proto__":{"isAdmin":true}', '__proto__'],
      ['body', '"constructor":{"prototype":{"polluted":true}}', 'constructor'],
      ['body', '"toString":"x"', 'toString'],
      ['line', '"valueOf":1', 'lines[0].valueOf'],
      ['line', '"__proto__":{}', 'lines[0].__proto__'],
      ['metadata', '"toString":"y"', 'metadata.toString'],
      ['metadata', '"__proto__":"p"', 'metadata.__proto__'],
      ['metadata', '"prototype":"p"', 'metadata.prototype'],
    ] as const)('%s: %s → 400 validation_failed naming it, nothing stored', async (at, member, field) => {
      const company = await t.newCompany();
      const response = await create(company, withMember(at, member));
      expect(expectProblem(response, 400, 'validation_failed').errors).toEqual([{ field, message: MESSAGE }]);
      await expectNothingStored(company);
    });
  });

  it.each([33, 1500, 2000, 100_000])(
    'objects and arrays nested %d deep → 400 malformed_json (a couple of thousand overflowed the pipe: 500)',
    async (depth) => {
      const company = await t.newCompany();
      const body = JSON.stringify(valid().build()).replace(
        /^\{/,
        `{"notes":${'['.repeat(depth - 1)}"[{\\"]"${']'.repeat(depth - 1)},`,
      );
      const response = await create(company, body);
      expect(expectProblem(response, 400, 'malformed_json').detail).toBe(
        'The request body nests objects and arrays deeper than 32 levels.',
      );
      await expectNothingStored(company);
    },
  );

  it('32 levels of nesting are parsed (and the schema answers)', async () => {
    const company = await t.newCompany();
    const body = JSON.stringify(valid().build()).replace(
      /^\{/,
      `{"notes":${'['.repeat(31)}${']'.repeat(31)},`,
    );
    const response = await create(company, body);
    const { errors } = expectProblem(response, 400, 'validation_failed');
    expect((errors ?? []).map((error) => error.field)).toContain('notes');
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
