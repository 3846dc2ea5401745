import type { Pool, PoolClient } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const CREATE = '/v1/sales/invoices/create';
/** Short, so a lock wait runs past it quickly; long enough that no healthy statement gets near it. */
const STATEMENT_TIMEOUT_MS = 2_000;

interface Books {
  invoices: string[];
  journalEntries: number;
  events: number;
  keys: string[];
}

/**
 * A lock wait past `statement_timeout` (SQLSTATE 57014) is a transient failure: 503 with
 * Retry-After, its transaction rolled back, nothing stored under the key, so the retry with the
 * same key executes once, cleanly.
 */
describe('a statement past DATABASE_STATEMENT_TIMEOUT_MS', () => {
  let t: TestApp;
  let db: Pool;

  beforeAll(async () => {
    t = await startTestApp({ DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });
    db = testDatabasePool();
  });
  afterAll(async () => {
    await db.end();
    await t.close();
  });

  function create(company: TestCompany, key: string): Promise<Response> {
    return t.http
      .post(CREATE)
      .set(company.auth)
      .set('Idempotency-Key', key)
      .send(anInvoice().withLine().build())
      .then((response) => response);
  }

  async function booksOf(company: TestCompany): Promise<Books> {
    const { rows } = await db.query<Books>(
      `SELECT ARRAY(SELECT number FROM invoices WHERE company_id = $1 ORDER BY sequence) AS invoices,
              (SELECT count(*)::int FROM journal_entries WHERE company_id = $1) AS "journalEntries",
              (SELECT count(*)::int FROM events WHERE company_id = $1) AS events,
              ARRAY(SELECT idempotency_key FROM idempotency_records WHERE company_id = $1
                     ORDER BY created_at) AS keys`,
      [company.companyId],
    );
    return rows[0];
  }

  /** Runs `body` while a separate connection holds `lockSql` (a row lock) in an open transaction. */
  async function whileLocked<T>(lockSql: string, params: unknown[], body: () => Promise<T>): Promise<T> {
    const locker: PoolClient = await db.connect();
    try {
      await locker.query('BEGIN');
      const locked = await locker.query(lockSql, params);
      expect(locked.rowCount).toBe(1);
      return await body();
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
  }

  function expectServiceUnavailable(response: Response): void {
    expect(response.status).toBe(503);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.headers['idempotency-key-expires']).toBeUndefined();
    expect(response.body).toMatchObject({
      status: 503,
      code: 'service_unavailable',
      detail: 'The database could not complete the request in time; retry shortly.',
    });
  }

  /**
   * A company with one invoice creates a second under a new key while `lockSql` holds a row the
   * create needs, past the statement timeout: 503 with Retry-After, and the books and keys are
   * as before. Then, the lock gone, the same key is retried: it executes as a first request.
   */
  async function timeoutThenRetry(
    lockSql: string,
  ): Promise<{ company: TestCompany; firstKey: string; key: string; retried: Response }> {
    const company = await t.newCompany();
    const firstKey = newKey();
    expect((await create(company, firstKey)).status).toBe(201);
    const before = await booksOf(company);

    const key = newKey();
    const started = Date.now();
    const timedOut = await whileLocked(lockSql, [company.companyId], () => create(company, key));
    expect(Date.now() - started).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 100);
    expectServiceUnavailable(timedOut);
    expect(await booksOf(company)).toEqual(before);

    const retried = await create(company, key);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(retried.body.number).toBe('INV-000002');
    return { company, firstKey, key, retried };
  }

  it('waiting for the invoice number answers 503 with Retry-After; the same key then executes once', async () => {
    // The (company, series) counter row: the create waits for its number past the timeout.
    const { company, firstKey, key, retried } = await timeoutThenRetry(
      `SELECT last_value FROM document_sequences WHERE company_id = $1 AND series = 'INV' FOR UPDATE`,
    );

    const replayed = await create(company, key);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.text).toBe(retried.text);
    expect(await booksOf(company)).toEqual({
      invoices: ['INV-000001', 'INV-000002'],
      journalEntries: 2,
      events: 2,
      keys: [firstKey, key],
    });
  }, 30_000);

  it('a timeout after the number, document and journal entry were written rolls all of them back', async () => {
    // The company's event counter: the create has taken its number and written the invoice and
    // its journal entry when it waits here, on its last write before the key's record.
    const { company } = await timeoutThenRetry(
      `SELECT last_position FROM event_sequences WHERE company_id = $1 FOR UPDATE`,
    );

    const positions = await db.query<{ position: string }>(
      'SELECT position FROM events WHERE company_id = $1 ORDER BY position',
      [company.companyId],
    );
    expect(positions.rows.map((row) => Number(row.position))).toEqual([1, 2]);
  }, 30_000);
});
