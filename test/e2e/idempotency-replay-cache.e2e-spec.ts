import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import type { Response } from 'supertest';
import { anInvoice, newKey } from '../support/invoice.builder';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

/**
 * The replay cache (IDEMPOTENCY_REPLAY_CACHE_SIZE) over HTTP, on the real database. Where an
 * answer came from is made visible by changing the stored record behind the process's back: the
 * cache answers with what the process kept, the database path with what is stored now.
 */
const CREATE = '/v1/sales/invoices/create';
const TAMPERED_BODY = '{"tampered":true}';
/** Headers that differ between any two requests, replays or not. */
const PER_REQUEST_HEADERS = new Set(['date', 'x-request-id', 'connection', 'keep-alive']);

let db: Pool;

beforeAll(() => {
  db = testDatabasePool();
});

afterAll(async () => {
  await db?.end();
});

function post(app: TestApp, company: TestCompany, key: string, bytes: string) {
  return app.http
    .post(CREATE)
    .set(company.auth)
    .set('Idempotency-Key', key)
    .set('Content-Type', 'application/json')
    .send(bytes);
}

/** Status, every header as sent (in order) except those that change per request, and the body. */
function asSent(response: Response) {
  const raw = (response as Response & { res: { rawHeaders: string[] } }).res.rawHeaders;
  const headers: Array<[string, string]> = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!PER_REQUEST_HEADERS.has(raw[i].toLowerCase()) && !raw[i].toLowerCase().startsWith('ratelimit')) {
      headers.push([raw[i], raw[i + 1]]);
    }
  }
  return { status: response.status, headers, body: response.text };
}

/** Replaces the stored answer of a key: only the database path can see it. */
async function tamperWithStoredAnswer(company: TestCompany, key: string): Promise<void> {
  const { rowCount } = await db.query(
    `UPDATE idempotency_records SET response_body = $3 WHERE company_id = $1 AND idempotency_key = $2`,
    [company.companyId, key, TAMPERED_BODY],
  );
  expect(rowCount).toBe(1);
}

/**
 * A create, its stored answer tampered with behind the process's back, then a byte-identical retry
 * (answered from the cache when the process kept the answer).
 */
async function createdThenReplayedAfterTamper(app: TestApp) {
  const company = await app.newCompany();
  const key = newKey();
  const bytes = JSON.stringify(anInvoice().withLine().build());
  const first = await post(app, company, key, bytes);
  await tamperWithStoredAnswer(company, key);
  const replay = await post(app, company, key, bytes);
  return { company, key, bytes, first, replay };
}

async function invoicesOf(company: TestCompany): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM invoices WHERE company_id = $1',
    [company.companyId],
  );
  return rows[0].n;
}

async function recordsOf(company: TestCompany): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM idempotency_records WHERE company_id = $1',
    [company.companyId],
  );
  return rows[0].n;
}

/**
 * One application at a time per file (see test-app.ts): the cached replay is taken from a first
 * application, which is closed before the second (IDEMPOTENCY_REPLAY_CACHE_SIZE=0) starts.
 */
describe('a replay from the cache and one from the database', () => {
  let withoutCache: TestApp;
  let company: TestCompany;
  let key: string;
  let bytes: string;
  let first: Response;
  let fromCache: Response;

  beforeAll(async () => {
    const withCache = await startTestApp();
    try {
      company = await withCache.newCompany();
      key = newKey();
      bytes = JSON.stringify(anInvoice().withOrderId().withLine().build());
      first = await post(withCache, company, key, bytes);
      fromCache = await post(withCache, company, key, bytes);
    } finally {
      await withCache.close();
    }
    withoutCache = await startTestApp({ IDEMPOTENCY_REPLAY_CACHE_SIZE: '0' });
  });

  afterAll(async () => {
    await withoutCache?.close();
  });

  it('are sent identically: status, headers (Idempotent-Replayed, Idempotency-Key-Expires, Location, ETag …) in order, body', async () => {
    const fromDatabase = await post(withoutCache, company, key, bytes);

    expect(first.status).toBe(201);
    expect(fromCache.headers['idempotent-replayed']).toBe('true');
    expect(fromCache.headers['idempotency-key-expires']).toBe(first.headers['idempotency-key-expires']);
    expect(fromCache.text).toBe(first.text);
    expect(asSent(fromCache)).toEqual(asSent(fromDatabase));
    expect(asSent(fromDatabase).headers.map(([name]) => name.toLowerCase())).toEqual(
      expect.arrayContaining(['location', 'content-type', 'idempotency-key-expires', 'idempotent-replayed']),
    );
    expect(await invoicesOf(company)).toBe(1);
  });

  it('with IDEMPOTENCY_REPLAY_CACHE_SIZE=0 every replay reads the database, and the contract holds', async () => {
    const other = await withoutCache.newCompany();
    const otherKey = newKey();
    const otherBytes = JSON.stringify(anInvoice().withLine().build());
    const created = await post(withoutCache, other, otherKey, otherBytes);
    const replay = await post(withoutCache, other, otherKey, otherBytes);
    await tamperWithStoredAnswer(other, otherKey);
    const afterTamper = await post(withoutCache, other, otherKey, otherBytes);
    const mismatch = await post(
      withoutCache,
      other,
      otherKey,
      JSON.stringify(anInvoice().withLine({ quantity: '3' }).build()),
    );

    expect(created.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(created.text);
    expect(afterTamper.text).toBe(TAMPERED_BODY);
    expect(mismatch.status).toBe(422);
    expect((mismatch.body as { code: string }).code).toBe('idempotency_key_reused');
    expect(await invoicesOf(other)).toBe(1);
  });
});

describe('with the replay cache (default)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('a byte-identical retry is answered by the process that finished the key, not from the database', async () => {
    const { first, replay } = await createdThenReplayedAfterTamper(t);

    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
  });

  it('another body with the same key still gets 422 idempotency_key_reused; the same JSON spelled otherwise replays', async () => {
    const company = await t.newCompany();
    const key = newKey();
    const invoice = anInvoice().withLine().build();
    const first = await post(t, company, key, JSON.stringify(invoice));

    const mismatch = await post(
      t,
      company,
      key,
      JSON.stringify(anInvoice().withLine({ quantity: '3' }).build()),
    );
    const respelled = await post(t, company, key, JSON.stringify(invoice, null, 2));

    expect(first.status).toBe(201);
    expect(mismatch.status).toBe(422);
    expect((mismatch.body as { code: string }).code).toBe('idempotency_key_reused');
    expect(respelled.status).toBe(201);
    expect(respelled.headers['idempotent-replayed']).toBe('true');
    expect(respelled.text).toBe(first.text);
    expect(await invoicesOf(company)).toBe(1);
  });

  it('a retry whose bytes no longer validate (a rule changed since) still gets its stored answer, not 400', async () => {
    const company = await t.newCompany();
    const key = newKey();
    const first = await post(t, company, key, JSON.stringify(anInvoice().withLine().build()));
    // As if these bytes had been valid when the key finished: the record names their digest.
    const invalid = JSON.stringify({ ...anInvoice().withLine().build(), currency: 'euro' });
    const { rowCount } = await db.query(
      `UPDATE idempotency_records SET request_digest = sha256(convert_to($3, 'UTF8'))
        WHERE company_id = $1 AND idempotency_key = $2`,
      [company.companyId, key, invalid],
    );
    expect(rowCount).toBe(1);

    const retry = await post(t, company, key, invalid);
    const newKeySameBytes = await post(t, company, newKey(), invalid);

    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.text).toBe(first.text);
    expect(newKeySameBytes.status).toBe(400);
    expect(await invoicesOf(company)).toBe(1);
  });

  describe('a transaction that fails at COMMIT', () => {
    beforeAll(async () => {
      await db.query(`
        CREATE OR REPLACE FUNCTION test_fail_invoice_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.notes = 'FAIL-AT-COMMIT' THEN
            RAISE EXCEPTION 'injected failure at commit';
          END IF;
          RETURN NULL;
        END $$`);
      await db.query('DROP TRIGGER IF EXISTS test_fail_invoice_at_commit ON invoices');
      await db.query(`
        CREATE CONSTRAINT TRIGGER test_fail_invoice_at_commit AFTER INSERT ON invoices
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_fail_invoice_at_commit()`);
    });

    afterAll(async () => {
      await db.query('DROP TRIGGER IF EXISTS test_fail_invoice_at_commit ON invoices');
      await db.query('DROP FUNCTION IF EXISTS test_fail_invoice_at_commit()');
    });

    it('leaves nothing cached: the same bytes execute again (and fail again), never a replay', async () => {
      const company = await t.newCompany();
      const key = newKey();
      const bytes = JSON.stringify(anInvoice().withLine().with({ notes: 'FAIL-AT-COMMIT' }).build());

      const failed = await post(t, company, key, bytes);
      const retry = await post(t, company, key, bytes);

      expect(failed.status).toBe(500);
      expect(retry.status).toBe(500);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await invoicesOf(company)).toBe(0);
      expect(await recordsOf(company)).toBe(0);
    });
  });
});

describe('with the replay cache and IDEMPOTENCY_KEY_TTL=2', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ IDEMPOTENCY_KEY_TTL: '2' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('an expired entry is not served: after the window the same bytes execute anew', async () => {
    const { company, key, bytes, first, replay } = await createdThenReplayedAfterTamper(t);
    expect(replay.text).toBe(first.text);

    await sleep(Date.parse(first.headers['idempotency-key-expires'] as string) + 1200 - Date.now());
    const again = await post(t, company, key, bytes);

    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.text).not.toBe(first.text);
    expect(again.text).not.toBe(TAMPERED_BODY);
    expect(await invoicesOf(company)).toBe(2);
  });
});
