import {
  IDEMPOTENCY_OBSERVER,
  purgeExpiredIdempotencyRecords,
  type IdempotencyObserver,
} from '@ledgerkey/idempotency';
import type { Pool } from 'pg';
import { DatabasePool } from '@ledgerkey/database';
import { anInvoice, newKey } from '../support/invoice.builder';
import { parsePrometheusText, sampleValue } from '../support/prometheus';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

const CREATE = '/v1/sales/invoices/create';
const OPERATION = 'sales.invoices.create';
/** Far older than anything other suites write: these rows are the first a purge takes. */
const LONG_AGO = '2001-01-01T00:00:00Z';

interface StoredKey {
  idempotency_key: string;
  fingerprint: Buffer;
  response_status: number;
  expires_at: Date;
}

let t: TestApp;
let db: Pool;

beforeAll(async () => {
  t = await startTestApp();
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
  await t?.close();
});

/**
 * Stores `count` records for `company` straight into the table, as the interceptor would have:
 * keys `<prefix>-1` … `<prefix>-<count>`, expiring one second apart from `firstExpiry` on.
 */
async function storeRecords(
  company: TestCompany,
  prefix: string,
  count: number,
  firstExpiry: string,
): Promise<void> {
  await db.query(
    `INSERT INTO idempotency_records
       (company_id, operation, idempotency_key, fingerprint, state, response_status, response_headers,
        response_body, created_at, expires_at)
     SELECT $1, $2, $3 || '-' || g, sha256(convert_to($3 || g, 'UTF8')), 'completed', 201, '{}', '{}',
            $4::timestamptz - interval '1 day', $4::timestamptz + g * interval '1 second'
       FROM generate_series(1, $5) AS g`,
    [company.companyId, OPERATION, prefix, firstExpiry, count],
  );
}

async function keysOf(company: TestCompany): Promise<StoredKey[]> {
  const { rows } = await db.query<StoredKey>(
    `SELECT idempotency_key, fingerprint, response_status, expires_at
       FROM idempotency_records WHERE company_id = $1 ORDER BY idempotency_key`,
    [company.companyId],
  );
  return rows;
}

async function countOf(table: 'invoices' | 'journal_entries', company: TestCompany): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE company_id = $1`,
    [company.companyId],
  );
  return rows[0].n;
}

function create(company: TestCompany, key: string, body: object) {
  return t.http.post(CREATE).set(company.auth).set('Idempotency-Key', key).send(body);
}

function inFuture(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString();
}

describe('purgeExpiredIdempotencyRecords', () => {
  it('deletes only expired records, in batches, while creates insert, reuse expired keys and replay', async () => {
    const company = await t.newCompany();
    const expiredPrefix = newKey('expired');
    await storeRecords(company, expiredPrefix, 1500, LONG_AGO);
    await storeRecords(company, newKey('live'), 20, inFuture(1));

    const replayed = await Promise.all(
      [1, 2, 3].map(async () => {
        const key = newKey('replayed');
        const body = anInvoice().withLine().build();
        const first = await create(company, key, body);
        expect(first.status).toBe(201);
        return { key, body, text: first.text };
      }),
    );
    const before = await keysOf(company);
    const live = before.filter((record) => record.expires_at.getTime() > Date.now());
    expect(live).toHaveLength(23);

    const reusedKeys = [1, 700, 1500].map((n) => `${expiredPrefix}-${n}`);
    const freshKeys = [1, 2, 3].map(() => newKey('fresh'));
    const [purged, reuses, replays, fresh] = await Promise.all([
      purgeExpiredIdempotencyRecords(db, { batchSize: 50 }),
      Promise.all(reusedKeys.map((key) => create(company, key, anInvoice().withLine().build()))),
      Promise.all(replayed.map(({ key, body }) => create(company, key, body))),
      Promise.all(freshKeys.map((key) => create(company, key, anInvoice().withLine().build()))),
    ]);

    // An expired key is a new key: it executes (its old fingerprint would otherwise answer 422).
    for (const reuse of [...reuses, ...fresh]) {
      expect(reuse.status).toBe(201);
      expect(reuse.headers['idempotent-replayed']).toBeUndefined();
    }
    replays.forEach((replay, i) => {
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.text).toBe(replayed[i].text);
    });
    // The reused expired records were removed by the purge or by their request, not both.
    expect(purged).toBeGreaterThanOrEqual(1500 - reusedKeys.length);

    const after = await keysOf(company);
    expect(after.filter((record) => record.expires_at.getTime() <= Date.now())).toEqual([]);
    expect(after.map((record) => record.idempotency_key).sort()).toEqual(
      [...live.map((record) => record.idempotency_key), ...reusedKeys, ...freshKeys].sort(),
    );
    // The live records are untouched.
    expect(after.filter((record) => live.some((l) => l.idempotency_key === record.idempotency_key))).toEqual(
      live,
    );
    expect(await countOf('invoices', company)).toBe(9);
    expect(await countOf('journal_entries', company)).toBe(9);
  });

  it('stops after maxPerRun records, oldest first; the next run continues', async () => {
    const company = await t.newCompany();
    await storeRecords(company, newKey('expired'), 30, '2000-01-01T00:00:00Z');

    expect(await purgeExpiredIdempotencyRecords(db, { batchSize: 10, maxPerRun: 25 })).toBe(25);
    const left = await keysOf(company);
    expect(left.map((record) => record.expires_at.toISOString())).toEqual(
      [26, 27, 28, 29, 30].map((n) => new Date(Date.parse('2000-01-01T00:00:00Z') + n * 1000).toISOString()),
    );

    expect(await purgeExpiredIdempotencyRecords(db, { batchSize: 10 })).toBeGreaterThanOrEqual(5);
    expect(await keysOf(company)).toEqual([]);
  });

  it('skips a record a transaction holds instead of waiting for it, and takes it on a later run', async () => {
    const company = await t.newCompany();
    const prefix = newKey('expired');
    await storeRecords(company, prefix, 5, LONG_AGO);
    const holder = await db.connect();
    try {
      await holder.query('BEGIN');
      // What a request reusing the key does first (IdempotencyRecordRepository.claim).
      await holder.query(
        `SELECT 1 FROM idempotency_records
          WHERE company_id = $1 AND operation = $2 AND idempotency_key = $3 FOR UPDATE`,
        [company.companyId, OPERATION, `${prefix}-3`],
      );

      const purge = purgeExpiredIdempotencyRecords(db, { batchSize: 2 });
      const timeout = new Promise<'blocked'>((resolve) =>
        setTimeout(() => resolve('blocked'), 5_000).unref(),
      );
      expect(await Promise.race([purge, timeout])).toBeGreaterThanOrEqual(4);
      expect((await keysOf(company)).map((record) => record.idempotency_key)).toEqual([`${prefix}-3`]);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await purgeExpiredIdempotencyRecords(db)).toBeGreaterThanOrEqual(1);
    expect(await keysOf(company)).toEqual([]);
  });

  it('never purges an unfinished operation, however old: it is resumed, not forgotten', async () => {
    const company = await t.newCompany();
    const prefix = newKey('unfinished');
    await db.query(
      `INSERT INTO idempotency_records
         (company_id, operation, idempotency_key, fingerprint, state, lease_expires_at, recovery_point,
          response_headers, created_at, expires_at)
       VALUES ($1, $2, $3 || '-leased', sha256('a'), 'in_progress', $4::timestamptz, 'charge_requested',
               NULL, $4::timestamptz, $4::timestamptz),
              ($1, $2, $3 || '-retryable', sha256('b'), 'failed_retryable', NULL, 'charge_requested',
               NULL, $4::timestamptz, $4::timestamptz)`,
      [company.companyId, 'test.payments.create', prefix, LONG_AGO],
    );
    await storeRecords(company, newKey('expired'), 2, LONG_AGO);

    expect(await purgeExpiredIdempotencyRecords(db)).toBeGreaterThanOrEqual(2);

    const { rows } = await db.query<{ idempotency_key: string; state: string }>(
      `SELECT idempotency_key, state FROM idempotency_records WHERE company_id = $1 ORDER BY idempotency_key`,
      [company.companyId],
    );
    expect(rows).toEqual([
      { idempotency_key: `${prefix}-leased`, state: 'in_progress' },
      { idempotency_key: `${prefix}-retryable`, state: 'failed_retryable' },
    ]);
  });

  it("runs on the application's DatabasePool (it answers rows) as well as on a pg pool (a result)", async () => {
    const company = await t.newCompany();
    await storeRecords(company, newKey('expired'), 3, LONG_AGO);
    expect(
      await purgeExpiredIdempotencyRecords(t.app.get(DatabasePool), { batchSize: 2 }),
    ).toBeGreaterThanOrEqual(3);
    expect(await keysOf(company)).toEqual([]);
  });

  it('reports its count through the idempotency observer to /metrics, as the purge_idempotency_keys task does', async () => {
    const purgedTotal = async () =>
      sampleValue(
        parsePrometheusText((await t.http.get('/metrics')).text),
        'ledgerkey_idempotency_records_purged_total',
      );
    const company = await t.newCompany();
    await storeRecords(company, newKey('expired'), 4, LONG_AGO);
    const before = await purgedTotal();

    const observer = t.app.get<IdempotencyObserver>(IDEMPOTENCY_OBSERVER);
    const purged = await purgeExpiredIdempotencyRecords(t.app.get(DatabasePool));
    observer.purged(purged);

    expect(purged).toBeGreaterThanOrEqual(4);
    expect((await purgedTotal())! - before!).toBe(purged);
  });

  it.each([
    ['a zero batch size', { batchSize: 0 }],
    ['a fractional batch size', { batchSize: 1.5 }],
    ['a negative maximum', { maxPerRun: -1 }],
  ])('refuses %s before touching the database', async (_name, options) => {
    await expect(purgeExpiredIdempotencyRecords(db, options)).rejects.toThrow(RangeError);
  });
});
