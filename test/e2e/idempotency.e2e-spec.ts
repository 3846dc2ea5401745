import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const CREATE = '/v1/sales/invoices/create';
const OPERATION = 'sales.invoices.create';
const REUSED_DETAIL = 'Idempotency-Key was already used with a different request payload.';
const IN_USE_DETAIL = 'A request with this Idempotency-Key is still being processed, retry shortly.';
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const DAY_MS = 86_400_000;

/** The default builder line: 2 × 50.00 at 21 % → net 10000, VAT 2100, gross 12100. */
const DEFAULT_GROSS = 12_100;

interface StoredRecord {
  idempotency_key: string;
  operation: string;
  fingerprint: Buffer;
  response_status: number;
  response_headers: Record<string, string>;
  response_body: string;
  created_at: Date;
  expires_at: Date;
}

interface CompanyBooks {
  invoices: number;
  journalEntries: number;
  /** document_sequences.last_value of series INV; null when no number was ever taken */
  sequence: number | null;
  records: StoredRecord[];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function problemOf(response: Response, status: number, code: string): Record<string, unknown> {
  const body = JSON.parse(response.text) as Record<string, unknown>;
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(body.status).toBe(status);
  return body;
}

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

function post(app: TestApp, company: TestCompany, key: string | undefined, body: object | string) {
  const request = app.http.post(CREATE).set(company.auth);
  if (key !== undefined) request.set('Idempotency-Key', key);
  if (typeof body === 'string') return request.set('Content-Type', 'application/json').send(body);
  return request.send(body);
}

async function booksOf(company: TestCompany): Promise<CompanyBooks> {
  const id = company.companyId;
  const [invoices, journal, sequence, records] = await Promise.all([
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM invoices WHERE company_id = $1', [id]),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM journal_entries WHERE company_id = $1', [id]),
    db.query<{ last_value: string }>(
      `SELECT last_value FROM document_sequences WHERE company_id = $1 AND series = 'INV'`,
      [id],
    ),
    db.query<StoredRecord>(
      `SELECT idempotency_key, operation, fingerprint, response_status, response_headers, response_body,
              created_at, expires_at
         FROM idempotency_records WHERE company_id = $1 ORDER BY created_at, idempotency_key`,
      [id],
    ),
  ]);
  return {
    invoices: invoices.rows[0].n,
    journalEntries: journal.rows[0].n,
    sequence: sequence.rows[0] ? Number(sequence.rows[0].last_value) : null,
    records: records.rows,
  };
}

async function expectNothingStored(company: TestCompany): Promise<void> {
  expect(await booksOf(company)).toEqual({ invoices: 0, journalEntries: 0, sequence: null, records: [] });
}

async function recordOf(company: TestCompany, key: string): Promise<StoredRecord | undefined> {
  return (await booksOf(company)).records.find((record) => record.idempotency_key === key);
}

describe('idempotency of POST /v1/sales/invoices/create', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  function create(company: TestCompany, key: string | undefined, body: object | string) {
    return post(t, company, key, body);
  }

  async function trialBalanceTotals(company: TestCompany): Promise<unknown> {
    const response = await t.http.get('/v1/ledger/trial-balance').set(company.auth);
    expect(response.status).toBe(200);
    return (response.body as { totals: unknown }).totals;
  }

  describe('the Idempotency-Key header', () => {
    it('missing → 400 idempotency_key_missing as problem+json, and nothing is stored', async () => {
      const company = await t.newCompany();
      const response = await create(company, undefined, anInvoice().withOrderId().withLine().build());
      const problem = problemOf(response, 400, 'idempotency_key_missing');
      expect(problem.detail).toBe('The Idempotency-Key header is required for this operation.');
      await expectNothingStored(company);
    });

    it.each([
      ['empty', ''],
      ['256 characters long', 'k'.repeat(256)],
      ['containing a space', 'order 1041'],
      ['containing "é"', 'clé-é'],
      ['containing a tab', 'order\t1041'],
      ['an unterminated quoted string', '"order-1041'],
    ])('%s → 400 idempotency_key_invalid, and nothing is stored', async (_name, key) => {
      const company = await t.newCompany();
      const response = await create(company, key, anInvoice().withOrderId().withLine().build());
      problemOf(response, 400, 'idempotency_key_invalid');
      await expectNothingStored(company);
    });

    it('255 characters long is accepted and stored as the key', async () => {
      const company = await t.newCompany();
      const key = `${newKey()}-`.padEnd(255, 'k');
      expect(key).toHaveLength(255);
      const response = await create(company, key, anInvoice().withLine().build());
      expect(response.status).toBe(201);
      const books = await booksOf(company);
      expect(books.records.map((record) => record.idempotency_key)).toEqual([key]);
      expect(books.invoices).toBe(1);
    });

    it('as a Structured Field string ("abc") names the same key as the bare value: the retry is a replay', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = anInvoice().withOrderId().withLine().build();
      const first = await create(company, key, body);
      expect(first.status).toBe(201);

      const retry = await create(company, `"${key}"`, body);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.text).toBe(first.text);

      const books = await booksOf(company);
      expect(books.records.map((record) => record.idempotency_key)).toEqual([key]);
      expect(books).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
    });
  });

  describe('first use', () => {
    it('executes once: 201, Location, Idempotency-Key-Expires ≈ now + 24 h, one invoice, one entry, one number', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const orderId = `order-${key}`;
      const before = Date.now();
      const response = await create(company, key, anInvoice().withOrderId(orderId).withLine().build());

      expect(response.status).toBe(201);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      const invoice = JSON.parse(response.text) as {
        id: string;
        number: string;
        sequence: number;
        grossTotal: number;
      };
      expect(invoice).toMatchObject({
        number: 'INV-000001',
        sequence: 1,
        orderId,
        grossTotal: DEFAULT_GROSS,
      });
      expect(response.headers.location).toBe(`/v1/sales/invoices/${invoice.id}`);

      const expires = response.headers['idempotency-key-expires'];
      expect(expires).toMatch(IMF_FIXDATE);
      const expiresAt = Date.parse(expires);
      expect(expiresAt).toBeGreaterThanOrEqual(before + DAY_MS - 60_000);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + DAY_MS + 60_000);

      const books = await booksOf(company);
      expect(books).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
      const invoiceRows = await db.query('SELECT id, number, order_id FROM invoices WHERE company_id = $1', [
        company.companyId,
      ]);
      expect(invoiceRows.rows).toEqual([{ id: invoice.id, number: 'INV-000001', order_id: orderId }]);
      const entries = await db.query(
        'SELECT source_type, source_id FROM journal_entries WHERE company_id = $1',
        [company.companyId],
      );
      expect(entries.rows).toEqual([{ source_type: 'invoice', source_id: invoice.id }]);

      expect(books.records).toHaveLength(1);
      const [record] = books.records;
      expect(record).toMatchObject({
        idempotency_key: key,
        operation: OPERATION,
        response_status: 201,
        response_body: response.text,
        response_headers: { Location: `/v1/sales/invoices/${invoice.id}` },
      });
      expect(Math.abs(record.expires_at.getTime() - expiresAt)).toBeLessThan(1000);

      expect(await trialBalanceTotals(company)).toEqual([
        {
          currency: 'EUR',
          debitTotal: String(DEFAULT_GROSS),
          creditTotal: String(DEFAULT_GROSS),
          balanced: true,
        },
      ]);
    });
  });

  describe('reuse with the same payload', () => {
    it('replays the stored status, Location and byte-identical body with Idempotent-Replayed: true; the books change once', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = anInvoice().withOrderId().withLine().build();
      const first = await create(company, key, body);
      expect(first.status).toBe(201);
      const booksAfterFirst = await booksOf(company);

      for (let attempt = 0; attempt < 2; attempt += 1) {
        const replay = await create(company, key, body);
        expect(replay.status).toBe(201);
        expect(replay.text).toBe(first.text);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.headers.location).toBe(first.headers.location);
        expect(replay.headers['content-type']).toBe(first.headers['content-type']);
        expect(replay.headers['idempotency-key-expires']).toBe(first.headers['idempotency-key-expires']);
      }

      const books = await booksOf(company);
      expect(books).toEqual(booksAfterFirst);
      expect(books).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
      expect(await trialBalanceTotals(company)).toEqual([
        {
          currency: 'EUR',
          debitTotal: String(DEFAULT_GROSS),
          creditTotal: String(DEFAULT_GROSS),
          balanced: true,
        },
      ]);
    });

    it('remembers the exact bytes (SHA-256): the same bytes replay; under another company they execute there', async () => {
      const company = await t.newCompany();
      const other = await t.newCompany();
      const key = newKey();
      const bytes = JSON.stringify(anInvoice().withLine().build());
      const first = await post(t, company, key, bytes);
      expect(first.status).toBe(201);
      const { rows } = await db.query<{ request_digest: Buffer }>(
        `SELECT request_digest FROM idempotency_records WHERE company_id = $1 AND idempotency_key = $2`,
        [company.companyId, key],
      );
      expect(rows[0].request_digest.toString('hex')).toBe(createHash('sha256').update(bytes).digest('hex'));

      const replay = await post(t, company, key, bytes);
      const elsewhere = await post(t, other, key, bytes);

      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(first.text);
      expect(elsewhere.status).toBe(201);
      expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
      expect(elsewhere.body.id).not.toBe(first.body.id);
      expect(await booksOf(company)).toMatchObject({ invoices: 1 });
      expect(await booksOf(other)).toMatchObject({ invoices: 1 });
    });

    const base = anInvoice().withOrderId('order-1041').withLine().build();
    const baseJson = JSON.stringify(base);

    it.each<{ name: string; currency?: string; first: object | string; retry: object | string }>([
      {
        name: 'keys reordered, whitespace, \\u escapes and another number spelling (raw JSON)',
        first: baseJson,
        retry: `{
          "lines" : [ { "vatRate":"21",  "unitPrice" : 5.0e3 ,"quantity":"2",
                        "description":"Consulting" } ],
          "customer":{"vatId":"LT100001234567","countryCode":"LT","name":"UAB Pirk\\u0117jas"}  ,
          "orderId"   :   "order-1041"
        }`,
      },
      {
        name: 'quantity "2.0" after "2"',
        first: base,
        retry: { ...base, lines: [{ ...(base.lines as object[])[0], quantity: '2.0' }] },
      },
      {
        name: 'vatRate "21.00" after "21"',
        first: base,
        retry: { ...base, lines: [{ ...(base.lines as object[])[0], vatRate: '21.00' }] },
      },
      { name: 'series omitted after series "INV"', first: { ...base, series: 'INV' }, retry: base },
      { name: 'series "INV" after series omitted', first: base, retry: { ...base, series: 'INV' } },
      {
        name: 'the company currency (USD) sent after it was omitted',
        currency: 'USD',
        first: base,
        retry: { ...base, currency: 'USD' },
      },
      {
        name: 'currency omitted after the company currency was sent',
        first: { ...base, currency: 'EUR' },
        retry: base,
      },
    ])('a different representation is a replay, not 422: $name', async ({ currency, first, retry }) => {
      const company = await t.newCompany(currency ? { currency } : {});
      const key = newKey();
      const original = await create(company, key, first);
      expect(original.status).toBe(201);

      const replay = await create(company, key, retry);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(original.text);
      expect(await booksOf(company)).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
    });
  });

  describe('reuse with a different payload', () => {
    const build = () => anInvoice().withOrderId('order-1041');

    it.each([
      ['a different amount', build().withLine({ unitPrice: 5001 })],
      ['a different quantity', build().withLine({ quantity: '3' })],
      ['a different currency', build().withLine().with({ currency: 'USD' })],
      [
        'a different customer name',
        build()
          .withLine()
          .with({ customer: { name: 'UAB Kitas', countryCode: 'LT', vatId: 'LT100001234567' } }),
      ],
      ['one more line', build().withLine().withLine({ description: 'Travel', unitPrice: 1200 })],
      ['a different orderId', anInvoice().withOrderId('order-1042').withLine()],
      ['no orderId', anInvoice().withLine()],
    ])(
      '%s → 422 idempotency_key_reused; the original record is untouched and nothing runs',
      async (_name, changed) => {
        const company = await t.newCompany();
        const key = newKey();
        const original = build().withLine().build();
        const first = await create(company, key, original);
        expect(first.status).toBe(201);
        const booksBefore = await booksOf(company);

        const reused = await create(company, key, changed.build());
        const problem = problemOf(reused, 422, 'idempotency_key_reused');
        expect(problem.detail).toBe(REUSED_DETAIL);
        expect(reused.headers['idempotent-replayed']).toBeUndefined();

        expect(await booksOf(company)).toEqual(booksBefore);
        expect(booksBefore).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });

        const replay = await create(company, key, original);
        expect(replay.status).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.text).toBe(first.text);
      },
    );
  });

  describe('outcomes of the operation', () => {
    it('a business rejection (409 order_already_invoiced) is stored under its key and replayed byte for byte', async () => {
      const company = await t.newCompany();
      const orderId = `order-${newKey()}`;
      const keyA = newKey('a');
      const keyB = newKey('b');
      const first = await create(company, keyA, anInvoice().withOrderId(orderId).withLine().build());
      expect(first.status).toBe(201);
      const firstInvoiceId = (first.body as { id: string }).id;

      const duplicateBody = anInvoice().withOrderId(orderId).withLine({ unitPrice: 7000 }).build();
      const rejected = await create(company, keyB, duplicateBody);
      const problem = problemOf(rejected, 409, 'order_already_invoiced');
      expect(problem.existingInvoiceId).toBe(firstInvoiceId);
      expect(rejected.headers['idempotent-replayed']).toBeUndefined();

      const replay = await create(company, keyB, duplicateBody);
      expect(replay.status).toBe(409);
      expect(replay.text).toBe(rejected.text);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers['content-type']).toMatch(/^application\/problem\+json/);

      const record = await recordOf(company, keyB);
      expect(record).toMatchObject({
        operation: OPERATION,
        response_status: 409,
        response_body: rejected.text,
      });
      expect(await booksOf(company)).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
    });

    it('a validation failure is not stored: the same key with a corrected body executes', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const invalid = anInvoice()
        .withLine({ quantity: 2 as unknown as string })
        .build();
      const refused = await create(company, key, invalid);
      const problem = problemOf(refused, 400, 'validation_failed');
      expect(problem.errors).toEqual(
        expect.arrayContaining([{ field: 'lines[0].quantity', message: expect.any(String) }]),
      );
      await expectNothingStored(company);

      const corrected = await create(company, key, anInvoice().withLine().build());
      expect(corrected.status).toBe(201);
      expect(corrected.headers['idempotent-replayed']).toBeUndefined();
      const books = await booksOf(company);
      expect(books).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
      expect(books.records).toHaveLength(1);
      expect(books.records[0]).toMatchObject({ idempotency_key: key, response_status: 201 });
    });
  });

  describe('answers that carry a secret', () => {
    it('are stored through the response sealer (webhook endpoint create); an invoice is not', async () => {
      const company = await t.newCompany();
      const endpointKey = newKey('endpoint');
      const endpoint = await t.http
        .post('/v1/webhook-endpoints/create')
        .set(company.auth)
        .set('Idempotency-Key', endpointKey)
        .send({ url: 'https://example.com/hook', enabledEvents: ['*'] });
      expect(endpoint.status).toBe(201);
      const invoiceKey = newKey('invoice');
      expect((await create(company, invoiceKey, anInvoice().withLine().build())).status).toBe(201);

      const { rows } = await db.query<{ operation: string; response_sealed: boolean }>(
        `SELECT operation, response_sealed FROM idempotency_records WHERE company_id = $1 ORDER BY operation`,
        [company.companyId],
      );
      expect(rows).toEqual([
        { operation: OPERATION, response_sealed: false },
        { operation: 'webhook-endpoints.create', response_sealed: true },
      ]);
      const replay = await t.http
        .post('/v1/webhook-endpoints/create')
        .set(company.auth)
        .set('Idempotency-Key', endpointKey)
        .send({ url: 'https://example.com/hook', enabledEvents: ['*'] });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(endpoint.text);
    });
  });

  describe('scope', () => {
    it('the same key in two companies makes two independent invoices, neither a replay', async () => {
      const companyA = await t.newCompany();
      const companyB = await t.newCompany();
      const key = newKey();
      const body = anInvoice().withOrderId('order-1041').withLine().build();

      const inA = await create(companyA, key, body);
      const inB = await create(companyB, key, body);
      expect([inA.status, inB.status]).toEqual([201, 201]);
      expect(inA.headers['idempotent-replayed']).toBeUndefined();
      expect(inB.headers['idempotent-replayed']).toBeUndefined();
      const invoiceA = inA.body as { id: string; number: string };
      const invoiceB = inB.body as { id: string; number: string };
      expect(invoiceA.id).not.toBe(invoiceB.id);
      expect([invoiceA.number, invoiceB.number]).toEqual(['INV-000001', 'INV-000001']);

      for (const company of [companyA, companyB]) {
        const books = await booksOf(company);
        expect(books).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
        expect(books.records.map((record) => record.idempotency_key)).toEqual([key]);
      }
      expect((await recordOf(companyA, key))?.response_body).toBe(inA.text);
      expect((await recordOf(companyB, key))?.response_body).toBe(inB.text);
    });
  });

  describe('a request while the key is held', () => {
    it('→ 409 idempotency_key_in_use with Retry-After; nothing runs; once released the retry executes', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = anInvoice().withOrderId().withLine().build();
      const holder = await db.connect();
      let holding = false;
      try {
        await holder.query('BEGIN');
        holding = true;
        // The interceptor's per-key lock (IdempotencyRecordRepository.claim).
        await holder.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
          `${company.companyId}\n${OPERATION}\n${key}`,
        ]);

        const busy = await create(company, key, body);
        const problem = problemOf(busy, 409, 'idempotency_key_in_use');
        expect(problem.detail).toBe(IN_USE_DETAIL);
        expect(busy.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
        await expectNothingStored(company);
      } finally {
        if (holding) await holder.query('ROLLBACK');
        holder.release();
      }

      const retry = await create(company, key, body);
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await booksOf(company)).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
    });
  });

  describe('a server error inside the transaction', () => {
    beforeAll(async () => {
      await db.query(`
        CREATE OR REPLACE FUNCTION test_fail_invoice() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.notes = 'FAIL-IN-TX' THEN
            RAISE EXCEPTION 'injected failure';
          END IF;
          RETURN NEW;
        END $$`);
      await db.query(`
        CREATE OR REPLACE TRIGGER test_fail_invoice BEFORE INSERT ON invoices
        FOR EACH ROW EXECUTE FUNCTION test_fail_invoice()`);
    });

    afterAll(async () => {
      await db.query('DROP TRIGGER IF EXISTS test_fail_invoice ON invoices');
      await db.query('DROP FUNCTION IF EXISTS test_fail_invoice()');
    });

    it('→ 500 internal_error without internals, and leaves no trace: no record, invoice, entry or number', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const failing = anInvoice().withLine().with({ notes: 'FAIL-IN-TX' }).build();

      for (let attempt = 0; attempt < 2; attempt += 1) {
        const response = await create(company, key, failing);
        const problem = problemOf(response, 500, 'internal_error');
        expect(Object.keys(problem).sort()).toEqual([
          'code',
          'detail',
          'requestId',
          'status',
          'title',
          'type',
        ]);
        expect(response.text).not.toContain('injected');
        expect(response.text).not.toContain('INSERT');
        expect(response.text).not.toContain('invoices');
        expect(response.headers['idempotent-replayed']).toBeUndefined();
        await expectNothingStored(company);
      }

      const retry = await create(company, key, anInvoice().withLine().build());
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(retry.body).toMatchObject({ number: 'INV-000001', sequence: 1 });
      expect(await booksOf(company)).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
    });
  });
});

/**
 * Its own application, started after the suite above has closed its one: @Transactional()
 * resolves the most recently constructed TransactionHost process-wide, so two live apps in one
 * Jest worker would share (and, on close, break) each other's transactions.
 */
describe('idempotency key expiry (IDEMPOTENCY_KEY_TTL=1)', () => {
  let shortLived: TestApp;

  beforeAll(async () => {
    shortLived = await startTestApp({ IDEMPOTENCY_KEY_TTL: '1' });
  });

  afterAll(async () => {
    await shortLived?.close();
  });

  it('announces the configured window in Idempotency-Key-Expires', async () => {
    const company = await shortLived.newCompany();
    const before = Date.now();
    const response = await post(shortLived, company, newKey(), anInvoice().withLine().build());
    expect(response.status).toBe(201);
    const expiresAt = Date.parse(response.headers['idempotency-key-expires']);
    expect(expiresAt).toBeGreaterThanOrEqual(before - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('an expired key is new, and the business key stops the duplicate: 409 order_already_invoiced naming the first invoice', async () => {
    const company = await shortLived.newCompany();
    const key = newKey();
    const orderId = `order-${key}`;
    const body = anInvoice().withOrderId(orderId).withLine().build();
    const first = await post(shortLived, company, key, body);
    expect(first.status).toBe(201);
    const firstInvoiceId = (first.body as { id: string }).id;

    await sleep(2200);
    const retry = await post(shortLived, company, key, body);
    const problem = problemOf(retry, 409, 'order_already_invoiced');
    expect(problem.existingInvoiceId).toBe(firstInvoiceId);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();

    const invoices = await db.query('SELECT id FROM invoices WHERE company_id = $1 AND order_id = $2', [
      company.companyId,
      orderId,
    ]);
    expect(invoices.rows).toEqual([{ id: firstInvoiceId }]);
    const books = await booksOf(company);
    expect(books).toMatchObject({ invoices: 1, journalEntries: 1, sequence: 1 });
    expect(books.records).toHaveLength(1);
    expect(books.records[0]).toMatchObject({ idempotency_key: key, response_status: 409 });
  });

  it('an expired key without a business key executes again: by contract only business keys outlive the window', async () => {
    const company = await shortLived.newCompany();
    const key = newKey();
    const body = anInvoice().withLine().build();
    const first = await post(shortLived, company, key, body);
    expect(first.status).toBe(201);

    await sleep(2200);
    const again = await post(shortLived, company, key, body);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const [firstInvoice, secondInvoice] = [first.body, again.body] as Array<{ id: string; number: string }>;
    expect(secondInvoice.id).not.toBe(firstInvoice.id);
    expect([firstInvoice.number, secondInvoice.number]).toEqual(['INV-000001', 'INV-000002']);
    const books = await booksOf(company);
    expect(books).toMatchObject({ invoices: 2, journalEntries: 2, sequence: 2 });
    expect(books.records).toHaveLength(1);
    expect(books.records[0].response_body).toBe(again.text);
  });
});
