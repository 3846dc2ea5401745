import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { problemOf } from '../support/problem-details';
import { invoiceBooks, post, sleep } from '../support/sales-invoice-idempotency';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { booksOf } = invoiceBooks(() => ({ db }));

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
