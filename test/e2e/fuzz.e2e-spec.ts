import fc from 'fast-check';
import {
  CREATE_ROUTES,
  EDGE_NUMBERS,
  edgeNumber,
  type FuzzContext,
  hostileHeader,
  hostileJson,
  INTEGER_FIELDS,
  mutatedInvoice,
  READ_ROUTES,
  setIn,
  TEXT_FIELDS,
  textAround,
  trickyUnit,
} from '../support/fuzz-arbitraries';
import { anInvoice } from '../support/invoice.builder';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp, type TestCompany } from '../support/test-app';

/**
 * Hostile input on every route: random JSON shapes, mutated valid bodies, odd headers. Never a
 * 5xx; every error is problem+json with a code; the service stays healthy. Seeded and bounded.
 */
const SEED = 20_261_130;
const RUNS = 60;

describe('fuzzing every route with hostile input', () => {
  let t: TestApp;
  let company: TestCompany;

  let context: FuzzContext;

  beforeAll(async () => {
    // Private webhook targets allowed: registration judges the URL without DNS.
    t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    company = await t.newCompany();
    // Large enough to take every credit note and allocation the runs below send.
    const invoice = await t.http
      .post('/v1/sales/invoices/create')
      .set(company.auth)
      .set('Idempotency-Key', `fuzz-${Math.random()}`)
      .send(anInvoice().withLine({ quantity: '1000000', unitPrice: 1_000_000, vatRate: '21' }).build());
    expect(invoice.status).toBe(201);
    context = { invoiceId: invoice.body.id };
  });
  afterAll(() => t.close());

  /** Sends a create (admin routes authenticate with the operator token, others with the company key). */
  function post(route: string, json: string) {
    const request = t.http
      .post(route)
      .set('Content-Type', 'application/json')
      .set('Idempotency-Key', `fuzz-${Math.random()}`);
    return (
      route === '/admin/companies'
        ? request.set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        : request.set(company.auth)
    ).send(json);
  }

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
    if ((response.body as { code?: unknown }).code === 'validation_failed') {
      // The contract: every validation_failed names what is wrong.
      expect((response.body as { errors?: unknown }).errors).toEqual(
        expect.arrayContaining([{ field: expect.any(String), message: expect.any(String) }]),
      );
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

  it('text at and around every bounded field length, counted every way: code points decide', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TEXT_FIELDS).chain((field) => fc.tuple(fc.constant(field), textAround(field.max))),
        async ([field, { text, over }]) => {
          const body = setIn(field.body(context), field.path, field.wrap ? field.wrap(text) : text);
          const response = await post(field.route, JSON.stringify(body));
          expectProblemOrSuccess(response);
          const errorField = field.path.replace(/\.(\d+)\./, '[$1].');
          if (over) {
            // One code point over the bound: always refused, naming the field.
            expect({
              status: response.status,
              fields: response.body.errors?.map((e: { field: string }) => e.field),
            }).toEqual({ status: 400, fields: expect.arrayContaining([errorField]) });
          } else if (field.plain) {
            // Within the bound, a field with no other rule is accepted and stored as sent.
            expect({ status: response.status, body: response.body }).toEqual({
              status: 201,
              body: expect.anything(),
            });
          }
        },
      ),
      { seed: SEED, numRuns: RUNS * 3 },
    );
  }, 120_000);

  it('numbers at the 2^53 edge (and -0, 1e309, exponents) in every integer field', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...INTEGER_FIELDS), edgeNumber, async (field, literal) => {
        const placeholder = '__EDGE_NUMBER__';
        const json = JSON.stringify(setIn(field.body(context), field.path, placeholder)).replace(
          `"${placeholder}"`,
          literal,
        );
        const response = await post(field.route, json);
        expectProblemOrSuccess(response);
        if (!Number.isSafeInteger(Number(literal))) {
          // Not an integer JavaScript holds exactly: refused, never a rounded amount stored.
          expect(response.status).toBe(400);
        }
      }),
      { seed: SEED, numRuns: RUNS * 2 },
    );
  }, 120_000);

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
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.array(trickyUnit, { maxLength: 10 }).map((units) => units.join('')),
          // Not percent-encoded UTF-8 once sent as is: %ZZ, a cut sequence, an overlong form.
          fc.constantFrom('%ZZ', '%E0%A4%A', '%C0%80', '%FF', 'abc%', '%D8%00'),
        ),
        fc.dictionary(
          fc.constantFrom('limit', 'startingAfter', 'x', 'limit[]'),
          fc.oneof(
            fc.string({ maxLength: 20 }),
            fc.constantFrom(...EDGE_NUMBERS),
            fc.array(trickyUnit, { maxLength: 5 }).map((units) => units.join('')),
          ),
        ),
        async (route, id, query) => {
          const path =
            id.startsWith('%') || id.endsWith('%') || id.includes('%D8') ? id : encodeURIComponent(id);
          const byId = await t.http.get(`${route}/${path}`).set(company.auth);
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
