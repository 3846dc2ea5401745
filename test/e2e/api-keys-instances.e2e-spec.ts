import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import { startApiProcess, stopAllApiProcesses, type ApiProcess } from '../support/api-process';
import { anInvoice, newKey } from '../support/invoice.builder';
import {
  createIsolatedDatabase,
  type IsolatedDatabase,
  isolatedDatabasePool,
} from '../support/isolated-database';
import type { TestCompany } from '../support/test-app';

/**
 * RATE_LIMIT_PER_SECOND and RATE_LIMIT_UNVERIFIED_PER_SECOND of both processes: each admits
 * 10/s, bursts of 20 (its half of 20/s, burst 40).
 */
const RATE = 20;
/** Requests with unknown keys sent while `api_keys` is locked (the per-address limit's test). */
const FLOOD = 10;
const LISTENERS = `SELECT pid FROM pg_stat_activity
  WHERE datname = current_database() AND application_name = 'ledgerkey-api-key-listener'`;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  at: number;
}

async function call(
  api: ApiProcess,
  path: string,
  secret: string,
  init: { method?: string; body?: object; idempotencyKey?: string } = {},
): Promise<Answer> {
  const response = await fetch(`${api.baseUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      Authorization: `Bearer ${secret}`,
      ...(init.body ? { 'Content-Type': 'application/json' } : {}),
      ...(init.idempotencyKey ? { 'Idempotency-Key': init.idempotencyKey } : {}),
    },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: JSON.parse(text) as Record<string, unknown>,
    at: Date.now(),
  };
}

async function createKey(api: ApiProcess, company: TestCompany): Promise<{ id: string; secret: string }> {
  const answer = await call(api, '/v1/api-keys/create', company.apiKey, {
    method: 'POST',
    body: { scope: 'read_write' },
    idempotencyKey: newKey('key'),
  });
  expect(answer.status).toBe(201);
  return answer.body as { id: string; secret: string };
}

/** Polls until the key is refused; the time from `since` to the first 401. */
async function msUntilRefused(
  api: ApiProcess,
  secret: string,
  since: number,
  withinMs = 10_000,
): Promise<number> {
  while (Date.now() - since < withinMs) {
    const answer = await call(api, '/v1/ledger/trial-balance', secret);
    if (answer.status === 401) return answer.at - since;
    expect(answer.status).toBe(200);
    // Slower than the company's rate on one process (RATE / 2 per second): the limit never answers.
    await sleep(150);
  }
  throw new Error(`the key still worked ${withinMs} ms after its revocation`);
}

function rateLimitHeaders(answer: Answer): Record<string, string | null> {
  return {
    limit: answer.headers.get('ratelimit-limit'),
    remaining: answer.headers.get('ratelimit-remaining'),
    reset: answer.headers.get('ratelimit-reset'),
  };
}

/**
 * Two API processes on a database of their own (so they are the only two listeners, and no other
 * suite's process shares their limits): revocations reach the other process within 5 s, with and
 * without its listener; rate limits are shared between them.
 */
describe('API keys and rate limits across two API processes', () => {
  let database: IsolatedDatabase;
  let a: ApiProcess;
  let b: ApiProcess;
  let db: Pool;

  beforeAll(async () => {
    database = await createIsolatedDatabase('key_instances');
    const env = {
      DATABASE_URL: database.url,
      RATE_LIMIT_PER_SECOND: String(RATE),
      RATE_LIMIT_UNVERIFIED_PER_SECOND: String(RATE),
      // More connections than the unknown-key flood below has requests: one that found a token
      // holds a connection while it waits on the locked table, and the verified key still needs one.
      DATABASE_POOL_SIZE: String(FLOOD + 6),
    };
    [a, b] = await Promise.all([startApiProcess({ env }), startApiProcess({ env })]);
    db = isolatedDatabasePool(database, 2);
    await untilBothShareTheLimit();
  }, 60_000);

  /** Each process counts the listeners every second: waits until both count two. */
  async function untilBothShareTheLimit(): Promise<void> {
    const probe = await a.newCompany();
    for (const api of [a, b]) {
      const deadline = Date.now() + 10_000;
      while ((await call(api, '/v1/events', probe.apiKey)).headers.get('ratelimit-limit') !== String(RATE)) {
        if (Date.now() > deadline) throw new Error('the processes did not count each other');
        await sleep(200);
      }
    }
  }

  afterAll(async () => {
    await stopAllApiProcesses();
    await db?.end();
    await database?.drop();
  });

  it('a key revoked through one process is refused by the other within 5 s (its listener hears the NOTIFY)', async () => {
    const company = await a.newCompany();
    const key = await createKey(a, company);
    expect((await call(b, '/v1/ledger/trial-balance', key.secret)).status).toBe(200);

    const revoke = await call(a, `/v1/api-keys/${key.id}/revoke`, company.apiKey, { method: 'POST' });
    expect(revoke.status).toBe(200);

    expect(await msUntilRefused(b, key.secret, revoke.at)).toBeLessThan(5_000);
  });

  it('with the listeners cut off, a key revoked (even by hand, in SQL) is refused within 5 s all the same', async () => {
    const company = await a.newCompany();
    const key = await createKey(a, company);
    expect((await call(b, '/v1/ledger/trial-balance', key.secret)).status).toBe(200);
    // Keep cutting the listeners' connections: revocations may go unheard; the cache's short TTL bounds them.
    let cutting = true;
    const cutter = (async () => {
      while (cutting) {
        await db.query(`SELECT pg_terminate_backend(pid) FROM (${LISTENERS}) l`);
        await sleep(20);
      }
    })();
    try {
      await sleep(300);
      await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [key.id]);
      const revokedAt = Date.now();

      expect(await msUntilRefused(b, key.secret, revokedAt)).toBeLessThan(5_000);
    } finally {
      cutting = false;
      await cutter;
    }
    // Both listeners come back on their own.
    const deadline = Date.now() + 15_000;
    while ((await db.query(LISTENERS)).rowCount !== 2) {
      if (Date.now() > deadline) throw new Error('the listeners did not reconnect');
      await sleep(200);
    }
    await untilBothShareTheLimit();
  });

  it('every answer carries RateLimit-Limit, -Remaining and -Reset: 200, 201, 404, 401', async () => {
    const company = await a.newCompany();
    const answers = [
      await call(a, '/v1/events', company.apiKey),
      await call(a, '/v1/sales/invoices/create', company.apiKey, {
        method: 'POST',
        body: anInvoice().withLine().build(),
        idempotencyKey: newKey('limits'),
      }),
      await call(a, `/v1/api-keys/00000000-0000-4000-8000-000000000000`, company.apiKey),
      await call(a, '/v1/events', `lk_${randomBytes(32).toString('base64url')}`),
    ];

    expect(answers.map((answer) => answer.status)).toEqual([200, 201, 404, 401]);
    for (const answer of answers) {
      const headers = rateLimitHeaders(answer);
      expect(headers.limit).toBe(String(RATE));
      expect(Number(headers.remaining)).toBeGreaterThanOrEqual(0);
      expect(Number(headers.remaining)).toBeLessThan(RATE);
      expect(Number(headers.reset)).toBeGreaterThanOrEqual(1);
    }
  });

  it('over the limit → 429 rate_limited with Retry-After; nothing is stored under its key, which then executes once', async () => {
    const body = anInvoice().withLine().build();
    // The create comes last in a burst three times the process's capacity. A token comes back
    // every 100 ms: on a busy machine the create may be admitted after one did, so the burst is
    // tried up to three times, each with a fresh company; the create refused is the one followed.
    let company: TestCompany | undefined;
    let idempotencyKey = '';
    let refused: Answer | undefined;
    for (let attempt = 0; attempt < 3 && refused?.status !== 429; attempt++) {
      company = await a.newCompany();
      idempotencyKey = newKey('limited');
      const apiKey = company.apiKey;
      const burst = Array.from({ length: 3 * RATE }, () => call(a, '/v1/events', apiKey));
      refused = await call(a, '/v1/sales/invoices/create', apiKey, { method: 'POST', body, idempotencyKey });
      expect((await Promise.all(burst)).filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
    }
    if (!company || !refused) throw new Error('no attempt was made');

    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(refused.body).toMatchObject({ status: 429, code: 'rate_limited' });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(rateLimitHeaders(refused).remaining).toBe('0');
    const stored = await db.query('SELECT 1 FROM idempotency_records WHERE idempotency_key = $1', [
      idempotencyKey,
    ]);
    expect(stored.rowCount).toBe(0);

    await sleep(retryAfter * 1000);
    const retried = await call(a, '/v1/sales/invoices/create', company.apiKey, {
      method: 'POST',
      body,
      idempotencyKey,
    });
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    const invoices = await db.query('SELECT 1 FROM invoices WHERE company_id = $1', [company.companyId]);
    expect(invoices.rowCount).toBe(1);
  });

  it('the two processes share one limit: a burst at both admits about RATE × 2 (the burst), not twice that', async () => {
    const company = await a.newCompany();
    // Verified on both, then their buckets (company and address) full again.
    expect((await call(a, '/v1/events', company.apiKey)).status).toBe(200);
    expect((await call(b, '/v1/events', company.apiKey)).status).toBe(200);
    await sleep(2_100);
    const started = Date.now();

    const answers = await Promise.all(
      Array.from({ length: 4 * RATE }, (_, i) => call(i % 2 === 0 ? a : b, '/v1/events', company.apiKey)),
    );

    const seconds = (Date.now() - started) / 1000;
    const admitted = answers.filter((answer) => answer.status === 200).length;
    expect(answers.every((answer) => answer.status === 200 || answer.status === 429)).toBe(true);
    // Both buckets full at the start (2 × RATE), plus what refilled during the burst (RATE per second);
    // limits per process without sharing would admit all 4 × RATE (2 × RATE burst each). The bound
    // follows the burst's duration: on a slow machine it refills more, never the unshared amount.
    expect(admitted).toBeGreaterThanOrEqual(2 * RATE - 2);
    expect(admitted).toBeLessThanOrEqual(2 * RATE + Math.ceil(RATE * seconds) + 2);
    expect(admitted).toBeLessThan(4 * RATE);
  });

  it('requests with unknown keys are limited per client address before any database lookup', async () => {
    const company = await a.newCompany();
    // Verified (cached) on a before the flood.
    expect((await call(a, '/v1/ledger/trial-balance', company.apiKey)).status).toBe(200);
    const unknownKey = (): string => `lk_${randomBytes(32).toString('base64url')}`;
    const locker = await db.connect();
    const flood: Array<Promise<Answer>> = [];
    try {
      // Ready before the drain, so that the lock and the flood follow it within milliseconds.
      await locker.query('BEGIN');
      const drainStarted = Date.now();
      const drain = await Promise.all(
        Array.from({ length: 3 * RATE }, () => call(a, '/v1/events', unknownKey())),
      );
      expect(drain.filter((answer) => answer.status === 429).length).toBeGreaterThanOrEqual(RATE);

      // Every key lookup now waits for this lock: an answer that comes back meanwhile never looked.
      await locker.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
      flood.push(...Array.from({ length: FLOOD }, () => call(a, '/v1/events', unknownKey())));
      const floodSent = Date.now();
      await sleep(1_000);
      const settled = await Promise.all(
        flood.map((answer) => Promise.race([answer, sleep(10).then(() => null)])),
      );
      const early = settled.filter((answer): answer is Answer => answer !== null);
      // Looking up are at most the tokens the flood found. The drain emptied the address's bucket,
      // which refills RATE / 2 per second: at most what came back since the drain began, and two
      // for the flood's way to the server (a busy machine's slow drain allows more, not a flake).
      const refilled = Math.ceil(((RATE / 2) * (floodSent - drainStarted)) / 1000) + 2;
      expect(early.length).toBeGreaterThanOrEqual(Math.max(1, flood.length - refilled));
      for (const answer of early) {
        expect(answer.status).toBe(429);
        expect(answer.body).toMatchObject({ code: 'rate_limited' });
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      // A verified key is not held up by the flood from its address.
      expect((await call(a, '/v1/ledger/trial-balance', company.apiKey)).status).toBe(200);
    } finally {
      await locker.query('COMMIT');
      locker.release();
    }
    for (const answer of await Promise.all(flood)) expect([401, 429]).toContain(answer.status);
  });
});
