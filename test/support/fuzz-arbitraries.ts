import fc from 'fast-check';
import { anInvoice } from './invoice.builder';
import { aPurchaseInvoice } from './purchase-invoice.builder';

/**
 * The hostile input of test/e2e/fuzz.e2e-spec.ts: the routes it hits, and fast-check arbitraries of
 * JSON, text around each field's bound, numbers at the 2^53 edge and header bytes.
 */

export const CREATE_ROUTES = [
  '/v1/sales/invoices/create',
  '/v1/sales/credit-notes/create',
  '/v1/settlements/create',
  '/v1/purchases/invoices/create',
  '/v1/webhook-endpoints/create',
];
export const READ_ROUTES = [
  '/v1/sales/invoices',
  '/v1/sales/credit-notes',
  '/v1/settlements',
  '/v1/purchases/invoices',
  '/v1/ledger/entries',
  '/v1/events',
  '/v1/webhook-endpoints',
];

/** Any JSON value, with strings that include control characters, lone surrogates and huge numbers. */
export const hostileJson = fc.jsonValue({ maxDepth: 4 });

/** A valid invoice with one field replaced by something hostile, at any depth. */
export const mutatedInvoice = fc
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
export const trickyUnit = fc.oneof(
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
export function textAround(max: number): fc.Arbitrary<{ text: string; over: boolean }> {
  return fc
    .tuple(fc.array(trickyUnit, { minLength: 1, maxLength: 6 }), fc.integer({ min: -2, max: 1 }))
    .map(([units, delta]) => ({ text: codePointsOf(units, Math.max(1, max + delta)), over: delta > 0 }));
}

type Body = Record<string, unknown>;

export function setIn(body: Body, path: string, value: unknown): Body {
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

export interface FuzzContext {
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
export const TEXT_FIELDS: BoundedTextField[] = [
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
export const EDGE_NUMBERS = [
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
export const edgeNumber = fc.oneof(
  fc.constantFrom(...EDGE_NUMBERS),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc
    .bigInt({ min: 2n ** 53n - 4n, max: 2n ** 53n + 4n })
    .chain((n) => fc.constantFrom(String(n), `-${n}`, `${n}.0`, `${n}e0`)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
);

/** Every integer field of every create route. */
export const INTEGER_FIELDS: Array<{ route: string; path: string; body(context: FuzzContext): Body }> = [
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
export const hostileHeader = fc.oneof(
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
