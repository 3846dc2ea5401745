import fc from 'fast-check';
import { anInvoice } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';

/**
 * Hostile input on every route: random JSON shapes, mutated valid bodies, odd headers. Never a
 * 5xx; every error is problem+json with a code; the service stays healthy. Seeded and bounded.
 */
const SEED = 20_261_130;
const RUNS = 60;

const CREATE_ROUTES = [
  '/v1/sales/invoices/create',
  '/v1/sales/credit-notes/create',
  '/v1/settlements/create',
  '/v1/purchases/invoices/create',
];
const READ_ROUTES = [
  '/v1/sales/invoices',
  '/v1/sales/credit-notes',
  '/v1/settlements',
  '/v1/purchases/invoices',
  '/v1/ledger/entries',
  '/v1/events',
];

/** Any JSON value, with strings that include control characters, lone surrogates and huge numbers. */
const hostileJson = fc.jsonValue({ maxDepth: 4 });

/** A valid invoice with one field replaced by something hostile, at any depth. */
const mutatedInvoice = fc
  .tuple(
    fc.constantFrom(
      'orderId',
      'series',
      'currency',
      'issueDate',
      'dueDate',
      'customer',
      'lines',
      'notes',
      'customer.name',
      'customer.countryCode',
      'customer.vatId',
      'customer.email',
      'lines.0',
      'lines.0.quantity',
      'lines.0.unitPrice',
      'lines.0.vatRate',
      'lines.0.description',
    ),
    fc.oneof(
      hostileJson,
      fc.string({ unit: 'binary', maxLength: 50 }),
      fc.constantFrom(
        1e308,
        -1,
        0.1,
        Number.MAX_SAFE_INTEGER + 2,
        '1e3',
        '-0',
        '0.00001',
        '9'.repeat(60),
        '',
        '\u0000',
        null,
        [],
        {},
      ),
    ),
  )
  .map(([path, value]) => {
    const body = anInvoice().withLine().build() as Record<string, unknown>;
    const keys = path.split('.');
    let target = body as Record<string, unknown>;
    for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
    target[keys[keys.length - 1]] = value;
    return body;
  });

/** Every byte a client can put in a header value (tab, 0x20–0x7E, 0x80–0xFF): odd, but sendable. */
const headerByte = fc.oneof(
  fc.constant(9),
  fc.integer({ min: 0x20, max: 0x7e }),
  fc.integer({ min: 0x80, max: 0xff }),
);
const hostileHeader = fc.oneof(
  fc.array(headerByte, { maxLength: 300 }).map((bytes) => String.fromCharCode(...bytes)),
  fc.constantFrom(
    '"',
    '""',
    '"a',
    '"\\x"',
    ' ',
    'a b',
    'x'.repeat(256),
    '"' + 'y'.repeat(254) + '"',
    'Bearer ',
    'bearer lk_x',
  ),
);

describe('fuzzing every route with hostile input', () => {
  let t: TestApp;
  let company: TestCompany;

  beforeAll(async () => {
    t = await startTestApp();
    company = await t.newCompany();
  });
  afterAll(() => t.close());

  function expectProblemOrSuccess(response: {
    status: number;
    headers: Record<string, string>;
    body: unknown;
  }): void {
    expect(response.status).toBeLessThan(500);
    if (response.status >= 400) {
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect((response.body as { code?: unknown }).code).toEqual(expect.any(String));
      expect((response.body as { status?: unknown }).status).toBe(response.status);
    }
  }

  it('random JSON bodies on every create route', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CREATE_ROUTES), hostileJson, async (route, body) => {
        const response = await t.http
          .post(route)
          .set(company.auth)
          .set('Idempotency-Key', `fuzz-${Math.random()}`)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(body));
        expectProblemOrSuccess(response);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 60_000);

  it('mutated invoices: a valid body with one hostile field', async () => {
    await fc.assert(
      fc.asyncProperty(mutatedInvoice, async (body) => {
        const response = await t.http
          .post('/v1/sales/invoices/create')
          .set(company.auth)
          .set('Idempotency-Key', `fuzz-${Math.random()}`)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(body));
        expectProblemOrSuccess(response);
      }),
      { seed: SEED, numRuns: RUNS * 2 },
    );
  }, 60_000);

  it('raw bytes as bodies, any content type', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 200 }),
        fc.constantFrom(
          'application/json',
          'application/json; charset=latin1',
          'text/plain',
          'application/x-www-form-urlencoded',
        ),
        async (bytes, contentType) => {
          const response = await t.http
            .post('/v1/sales/invoices/create')
            .set(company.auth)
            .set('Idempotency-Key', `fuzz-${Math.random()}`)
            .set('Content-Type', contentType)
            .send(Buffer.from(bytes));
          expectProblemOrSuccess(response);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  }, 60_000);

  it('hostile Idempotency-Key and Authorization headers', async () => {
    await fc.assert(
      fc.asyncProperty(hostileHeader, hostileHeader, fc.boolean(), async (key, auth, validAuth) => {
        const response = await t.http
          .post('/v1/sales/invoices/create')
          .set('Authorization', validAuth ? company.auth.Authorization : auth)
          .set('Idempotency-Key', key)
          .send(anInvoice().withLine().build());
        expectProblemOrSuccess(response);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 60_000);

  it('hostile ids and query strings on every read route', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...READ_ROUTES),
        fc.string({ maxLength: 40 }),
        fc.dictionary(
          fc.constantFrom('limit', 'startingAfter', 'x', 'limit[]'),
          fc.string({ maxLength: 20 }),
        ),
        async (route, id, query) => {
          const byId = await t.http.get(`${route}/${encodeURIComponent(id)}`).set(company.auth);
          expectProblemOrSuccess(byId);
          const list = await t.http.get(route).query(query).set(company.auth);
          expectProblemOrSuccess(list);
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  }, 60_000);

  it('stays healthy afterwards', async () => {
    const ready = await t.http.get('/health/ready');
    expect(ready.status).toBe(200);
    const trialBalance = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
    for (const total of trialBalance.body.totals as Array<{ balanced: boolean }>)
      expect(total.balanced).toBe(true);
  });
});
