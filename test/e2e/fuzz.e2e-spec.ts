import fc from 'fast-check';
import { anInvoice } from '../support/invoice.builder';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import { startTestApp, TEST_ADMIN_TOKEN, type TestApp, type TestCompany } from '../support/test-app';

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
  '/v1/webhook-endpoints/create',
];
const READ_ROUTES = [
  '/v1/sales/invoices',
  '/v1/sales/credit-notes',
  '/v1/settlements',
  '/v1/purchases/invoices',
  '/v1/ledger/entries',
  '/v1/events',
  '/v1/webhook-endpoints',
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

/**
 * Text whose length depends on who counts: combining marks, variation selectors (which
 * class-validator's Length skipped), emoji made of surrogate pairs and ZWJ sequences, characters
 * that grow under URL percent-encoding (é → %C3%A9, 𝄞 → 12 characters) and under Unicode
 * normalization or case mapping (U+FDFA is 18 code points in NFKC, U+0390 three when upper-cased,
 * ß → SS, ﬃ → ffi, ㌀ → アパート). What found items 2 and 3 of issue 9.
 */
const combining = fc
  .tuple(
    fc.constantFrom('a', 'e', 'o', 'ı', 'Z'),
    fc.array(fc.integer({ min: 0x300, max: 0x36f }), { minLength: 1, maxLength: 3 }),
  )
  .map(([base, marks]) => base + String.fromCodePoint(...marks));
const variationSelectors = fc.constantFrom('a\ufe0f', 'a\ufe0e', '❤\ufe0f', '#\ufe0f\u20e3', '\ufe0f');
const emoji = fc.constantFrom('😀', '👩\u200d👩\u200d👧\u200d👦', '🏳\ufe0f\u200d🌈', '🇱🇹', '👍🏽', '𝄞');
const growsWhenPercentEncoded = fc.constantFrom('é', '€', '中', '𝄞', ' ', '%', '"', '<');
const growsWhenNormalized = fc.constantFrom(
  '\ufdfa',
  '\u0390',
  'ß',
  'ﬃ',
  '\u3300',
  '\u1e9e',
  '\u01f0',
  'İ',
  '\u2474',
);
const trickyUnit = fc.oneof(
  combining,
  variationSelectors,
  emoji,
  growsWhenPercentEncoded,
  growsWhenNormalized,
  fc.constant('a'),
);

/** Exactly `count` code points, cycling through `units` (a cut ZWJ sequence is still valid text). */
function codePointsOf(units: string[], count: number): string {
  const codePoints = units.flatMap((unit) => [...unit]);
  return Array.from({ length: count }, (_, index) => codePoints[index % codePoints.length]).join('');
}

/** Tricky text of max − 2 … max + 1 code points: at and around a field's bound. */
function textAround(max: number): fc.Arbitrary<{ text: string; over: boolean }> {
  return fc
    .tuple(fc.array(trickyUnit, { minLength: 1, maxLength: 6 }), fc.integer({ min: -2, max: 1 }))
    .map(([units, delta]) => ({ text: codePointsOf(units, Math.max(1, max + delta)), over: delta > 0 }));
}

type Body = Record<string, unknown>;

function setIn(body: Body, path: string, value: unknown): Body {
  const keys = path.split('.');
  let target = body;
  for (const key of keys.slice(0, -1)) target = target[key] as Body;
  target[keys[keys.length - 1]] = value;
  return body;
}

interface BoundedTextField {
  route: string;
  path: string;
  max: number;
  /** Only the length rule applies (no pattern, no format), so within the bound means 2xx. */
  plain: boolean;
  body(context: FuzzContext): Body;
  /** How the text goes into the field (e.g. after a URL prefix). */
  wrap?: (text: string) => string;
}

interface FuzzContext {
  invoiceId: string;
}

const INVOICE_BODY = () =>
  anInvoice()
    .withLine()
    .with({ customer: { name: 'UAB Pirkėjas', countryCode: 'LT' } })
    .build();
const CREDIT_NOTE_BODY = (context: FuzzContext): Body => ({
  invoiceId: context.invoiceId,
  reason: 'other',
  lines: [{ description: 'Refund', quantity: '1', unitPrice: 1, vatRate: '21' }],
});
const PURCHASE_BODY = () =>
  aPurchaseInvoice()
    .withSupplier({ name: 'UAB Tiekėjas', countryCode: 'LT', vatId: 'LT100009876543' })
    .withLine()
    .build();
const SETTLEMENT_BODY = (context: FuzzContext): Body => ({
  payoutId: `po_${Math.random()}`,
  currency: 'EUR',
  paidAt: '2026-11-30T10:00:00Z',
  allocations: [{ invoiceId: context.invoiceId, amount: 1 }],
});

/** Every bounded text field of every create route. */
const TEXT_FIELDS: BoundedTextField[] = [
  // Unique per company: text within the bound may name an order already invoiced (409).
  { route: '/v1/sales/invoices/create', path: 'orderId', max: 100, plain: false, body: INVOICE_BODY },
  { route: '/v1/sales/invoices/create', path: 'notes', max: 2000, plain: true, body: INVOICE_BODY },
  { route: '/v1/sales/invoices/create', path: 'customer.name', max: 200, plain: true, body: INVOICE_BODY },
  { route: '/v1/sales/invoices/create', path: 'customer.address', max: 500, plain: true, body: INVOICE_BODY },
  { route: '/v1/sales/invoices/create', path: 'customer.email', max: 254, plain: false, body: INVOICE_BODY },
  {
    route: '/v1/sales/invoices/create',
    path: 'lines.0.description',
    max: 1000,
    plain: true,
    body: INVOICE_BODY,
  },
  { route: '/v1/sales/credit-notes/create', path: 'memo', max: 2000, plain: true, body: CREDIT_NOTE_BODY },
  {
    route: '/v1/sales/credit-notes/create',
    path: 'lines.0.description',
    max: 1000,
    plain: true,
    body: CREDIT_NOTE_BODY,
  },
  // Printable only, and its upper-cased form must fit too.
  {
    route: '/v1/purchases/invoices/create',
    path: 'documentNumber',
    max: 100,
    plain: false,
    body: PURCHASE_BODY,
  },
  {
    route: '/v1/purchases/invoices/create',
    path: 'supplier.name',
    max: 200,
    plain: true,
    body: PURCHASE_BODY,
  },
  {
    // Without a VAT id the NFKC-normalized name is the supplier's identity (and part of a unique key).
    route: '/v1/purchases/invoices/create',
    path: 'supplier.name',
    max: 200,
    plain: false,
    body: () => aPurchaseInvoice().withSupplier({ name: 'x', countryCode: 'LT' }).withLine().build(),
  },
  {
    route: '/v1/purchases/invoices/create',
    path: 'supplier.address',
    max: 500,
    plain: true,
    body: PURCHASE_BODY,
  },
  { route: '/v1/purchases/invoices/create', path: 'notes', max: 2000, plain: true, body: PURCHASE_BODY },
  {
    route: '/v1/purchases/invoices/create',
    path: 'lines.0.description',
    max: 1000,
    plain: true,
    body: PURCHASE_BODY,
  },
  // Visible ASCII only.
  { route: '/v1/settlements/create', path: 'payoutId', max: 255, plain: false, body: SETTLEMENT_BODY },
  {
    // Percent-encoding makes the stored URL up to 12 times longer than the text sent.
    route: '/v1/webhook-endpoints/create',
    path: 'url',
    max: 2048 - 'http://127.0.0.1:9/'.length,
    plain: false,
    body: () => ({ url: 'http://127.0.0.1:9/', enabledEvents: ['*'] }),
    wrap: (text) => `http://127.0.0.1:9/${text}`,
  },
  {
    route: '/admin/companies',
    path: 'name',
    max: 200,
    plain: true,
    body: () => ({ name: 'x', countryCode: 'LT', currency: 'EUR' }),
  },
];

/**
 * JSON number literals at and around 2^53 (and other edges), sent as written: JSON.stringify
 * could not produce -0, 1e309 or 9007199254740993.
 */
const EDGE_NUMBERS = [
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '-9007199254740991',
  '-9007199254740993',
  '9007199254740991.0',
  '1000000000000',
  '1000000000001',
  '1e15',
  '1E16',
  '1e21',
  '99999999999999999999999',
  '1e308',
  '1e309',
  '-1e309',
  '5e-324',
  '1e-7',
  '0',
  '-0',
  '0.0',
  '-0.0',
  '1.0',
  '1.5',
  '-1',
];
const edgeNumber = fc.oneof(
  fc.constantFrom(...EDGE_NUMBERS),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc
    .bigInt({ min: 2n ** 53n - 4n, max: 2n ** 53n + 4n })
    .chain((n) => fc.constantFrom(String(n), `-${n}`, `${n}.0`, `${n}e0`)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
);

/** Every integer field of every create route. */
const INTEGER_FIELDS: Array<{ route: string; path: string; body(context: FuzzContext): Body }> = [
  { route: '/v1/sales/invoices/create', path: 'lines.0.unitPrice', body: INVOICE_BODY },
  { route: '/v1/sales/credit-notes/create', path: 'lines.0.unitPrice', body: CREDIT_NOTE_BODY },
  { route: '/v1/purchases/invoices/create', path: 'lines.0.unitPrice', body: PURCHASE_BODY },
  { route: '/v1/settlements/create', path: 'allocations.0.amount', body: SETTLEMENT_BODY },
  { route: '/v1/settlements/create', path: 'feeAmount', body: SETTLEMENT_BODY },
];

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
