import type { Pool } from 'pg';
import { anInvoice, newKey } from '../support/invoice.builder';
import { problemOf } from '../support/problem-details';
import { IN_USE_DETAIL, invoiceBooks, invoiceCalls, OPERATION } from '../support/sales-invoice-idempotency';
import { startTestApp, type TestApp } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

const { booksOf, expectNothingStored, recordOf } = invoiceBooks(() => ({ db }));

describe('idempotency of POST /v1/sales/invoices/create', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  const { create } = invoiceCalls(() => ({ t }));

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
