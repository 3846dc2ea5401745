import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { aPurchaseInvoice } from '../support/purchase-invoice.builder';
import {
  OPERATION,
  post,
  problemOf,
  type PurchaseInvoiceBody,
  purchaseBooks,
  purchaseInvoiceCalls,
  REUSED_DETAIL,
  sleep,
} from '../support/purchase-invoice-calls';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { booksOf, purchaseInvoiceIds } = purchaseBooks(() => db);

describe('purchase invoices', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create } = purchaseInvoiceCalls(() => t);

  describe('idempotency', () => {
    it('replays the stored 201, Location and byte-identical body with Idempotent-Replayed: true; the books change once', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const body = aPurchaseInvoice().build();
      const first = await create(company, body, key);
      expect(first.status).toBe(201);
      const booksAfterFirst = await booksOf(company);

      for (let attempt = 0; attempt < 2; attempt += 1) {
        const replay = await create(company, body, key);
        expect(replay.status).toBe(201);
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.text).toBe(first.text);
        expect(replay.headers.location).toBe(first.headers.location);
        expect(replay.headers['idempotency-key-expires']).toBe(first.headers['idempotency-key-expires']);
      }
      // Omitting the company currency and sending it are one payload.
      const explicitCurrency = await create(company, { ...body, currency: 'EUR' }, key);
      expect(explicitCurrency.headers['idempotent-replayed']).toBe('true');
      expect(explicitCurrency.text).toBe(first.text);

      expect(await booksOf(company)).toEqual(booksAfterFirst);
      expect(booksAfterFirst).toMatchObject({ purchaseInvoices: 1, journalEntries: 1 });
    });

    it.each<[string, (body: Record<string, unknown>) => Record<string, unknown>]>([
      [
        'a different amount',
        (body) => ({ ...body, lines: [{ ...(body.lines as object[])[0], unitPrice: 5001 }] }),
      ],
      ['a different document number', (body) => ({ ...body, documentNumber: 'OTHER-1' })],
      ['another spelling of the same document number', (body) => ({ ...body, documentNumber: 'inv 001' })],
      [
        'a different supplier name',
        (body) => ({ ...body, supplier: { name: 'UAB Kitas', countryCode: 'LT' } }),
      ],
      ['a different issue date', (body) => ({ ...body, issueDate: '2026-12-01' })],
    ])('%s under the same key → 422 idempotency_key_reused; nothing runs', async (_name, change) => {
      const company = await t.newCompany();
      const key = newKey();
      const original = aPurchaseInvoice().withDocumentNumber('INV001').build();
      const first = await create(company, original, key);
      expect(first.status).toBe(201);
      const booksBefore = await booksOf(company);

      const reused = await create(company, change(original), key);

      expect(problemOf(reused, 422, 'idempotency_key_reused').detail).toBe(REUSED_DETAIL);
      expect(reused.headers['idempotent-replayed']).toBeUndefined();
      expect(await booksOf(company)).toEqual(booksBefore);
      const replay = await create(company, original, key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(first.text);
    });

    it('a key used for a sales invoice is a different key for a purchase invoice (scope: operation)', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const sales = await t.http
        .post('/v1/sales/invoices/create')
        .set(company.auth)
        .set('Idempotency-Key', key)
        .send(anInvoice().withLine().build());
      const purchase = await create(company, aPurchaseInvoice().build(), key);

      expect([sales.status, purchase.status]).toEqual([201, 201]);
      expect(purchase.headers['idempotent-replayed']).toBeUndefined();
      expect(
        (await booksOf(company)).records.map((row) => [row.idempotency_key, row.operation]).sort(),
      ).toEqual(
        [
          [key, OPERATION],
          [key, 'sales.invoices.create'],
        ].sort(),
      );
    });
  });
});

/**
 * Its own application, started after the suite above has closed its one: @Transactional()
 * resolves the most recently constructed TransactionHost process-wide, so two live apps in one
 * Jest worker would share (and, on close, break) each other's transactions.
 */
describe('purchase invoices after key expiry (IDEMPOTENCY_KEY_TTL=1)', () => {
  let shortLived: TestApp;

  beforeAll(async () => {
    shortLived = await startTestApp({ IDEMPOTENCY_KEY_TTL: '1' });
  });

  afterAll(async () => {
    await shortLived?.close();
  });

  it('a retry after the key expired records nothing: 409 purchase_invoice_duplicate naming the first', async () => {
    const company = await shortLived.newCompany();
    const key = newKey();
    const body = aPurchaseInvoice().build();
    const first = await post(shortLived, company, key, body);
    expect(first.status).toBe(201);
    const firstId = (first.body as PurchaseInvoiceBody).id;

    await sleep(2200);
    const retry = await post(shortLived, company, key, body);

    const problem = problemOf(retry, 409, 'purchase_invoice_duplicate');
    expect(problem.existingPurchaseInvoiceId).toBe(firstId);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await purchaseInvoiceIds(company)).toEqual([firstId]);
    const books = await booksOf(company);
    expect(books).toMatchObject({ purchaseInvoices: 1, purchaseInvoiceLines: 1, journalEntries: 1 });
    expect(books.records).toEqual([
      { idempotency_key: key, operation: OPERATION, response_status: 409, response_body: retry.text },
    ]);
  });
});
