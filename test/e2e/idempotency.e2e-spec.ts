import { createHash } from 'node:crypto';
import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { problemOf } from '../support/problem-details';
import {
  DAY_MS,
  DEFAULT_GROSS,
  IMF_FIXDATE,
  invoiceBooks,
  invoiceCalls,
  OPERATION,
  post,
  REUSED_DETAIL,
} from '../support/sales-invoice-idempotency';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { booksOf, expectNothingStored } = invoiceBooks(() => ({ db }));

describe('idempotency of POST /v1/sales/invoices/create', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create, trialBalanceTotals } = invoiceCalls(() => ({ t }));

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
});
