import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import type { Pool } from 'pg';
import { ReplayFrontDoor } from '../../apps/api/src/replay-front-door/replay-front-door';
import { CapturedLogs } from '../support/captured-logs';
import { createIsolatedDatabase, type IsolatedDatabase } from '../support/isolated-database';
import { anInvoice, newKey } from '../support/invoice.builder';
import { parsePrometheusText, sampleValue } from '../support/prometheus';
import { startTestApp, type TestApp, type TestCompany } from '../support/test-app';
import { testDatabasePool } from '../support/test-database';

/**
 * The replay front door over HTTP, on the real database: byte-identical retries of finished keys
 * answered from the replay cache before Express and Nest run, everything else left to them. What
 * reached the framework is counted at the Express application's entry (`app.handle`), the one
 * thing the front door hands requests to.
 */
const CREATE = '/v1/sales/invoices/create';

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

interface RawRequest {
  path?: string;
  headers: Record<string, string>;
  /** The body, written part by part with `pauseMs` between parts. */
  parts: Buffer[];
  pauseMs?: number;
}

let db: Pool;
const logs = new CapturedLogs();

beforeAll(() => {
  db = testDatabasePool();
  logs.capture();
});

afterAll(async () => {
  jest.restoreAllMocks();
  await db?.end();
});

/** Counts the requests that reach the Express application from now on. */
function expressEntries(t: TestApp): { count: number } {
  const express = t.app.getHttpAdapter().getInstance() as unknown as {
    handle: (...args: unknown[]) => unknown;
  };
  const original = express.handle.bind(express);
  const counter = { count: 0 };
  express.handle = (...args: unknown[]) => {
    counter.count += 1;
    return original(...args);
  };
  return counter;
}

/** A POST written by hand: the body in parts, with pauses between them if asked. */
function rawPost(t: TestApp, { path = CREATE, headers, parts, pauseMs = 0 }: RawRequest): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${t.baseUrl}${path}`, { method: 'POST', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    request.on('error', reject);
    void (async () => {
      for (const [index, part] of parts.entries()) {
        if (index > 0 && pauseMs > 0) await sleep(pauseMs);
        request.write(part);
      }
      request.end();
    })();
  });
}

function jsonHeaders(company: TestCompany, key: string, bytes: Buffer, extra: Record<string, string> = {}) {
  return {
    ...company.auth,
    'Idempotency-Key': key,
    'Content-Type': 'application/json',
    'Content-Length': String(bytes.length),
    ...extra,
  };
}

function invoiceBytes(): Buffer {
  return Buffer.from(JSON.stringify(anInvoice().withLine().build()), 'utf8');
}

async function invoicesOf(company: TestCompany): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM invoices WHERE company_id = $1',
    [company.companyId],
  );
  return rows[0].n;
}

async function scrape(t: TestApp) {
  return parsePrometheusText((await t.http.get('/metrics').expect(200)).text);
}

/** A company with a finished key: the create's answer, its bytes and headers. */
async function finishedKey(t: TestApp) {
  const company = await t.newCompany();
  const key = newKey();
  const bytes = invoiceBytes();
  const first = await rawPost(t, { headers: jsonHeaders(company, key, bytes), parts: [bytes] });
  expect(first.status).toBe(201);
  return { company, key, bytes, first };
}

describe('with the replay cache (default)', () => {
  let t: TestApp;
  let entries: { count: number };

  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: 'log' });
    entries = expressEntries(t);
  });

  afterAll(async () => {
    await t?.close();
  });

  beforeEach(() => {
    logs.clear();
  });

  it('stands before every keyed route of the public API, none of the operator API', () => {
    const document = JSON.parse(readFileSync(resolve(__dirname, '../../docs/openapi.json'), 'utf8')) as {
      paths: Record<string, { post?: { parameters?: Array<{ name: string }> } }>;
    };
    const keyed = Object.entries(document.paths)
      .filter(([, item]) => item.post?.parameters?.some((parameter) => parameter.name === 'Idempotency-Key'))
      .map(([path]) => path);

    expect(keyed).toContain(CREATE);
    expect(t.app.get(ReplayFrontDoor).paths.sort()).toEqual(keyed.sort());
  });

  it('answers byte-identical retries before Express: the stored answer, logged, timed and counted as the route would', async () => {
    const { company, key, bytes, first } = await finishedKey(t);
    const before = await scrape(t);
    const reached = entries.count;

    const replays = [
      await rawPost(t, { headers: jsonHeaders(company, key, bytes), parts: [bytes] }),
      await rawPost(t, { headers: jsonHeaders(company, key, bytes), parts: [bytes] }),
    ];

    expect(entries.count).toBe(reached);
    for (const replay of replays) {
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(first.text);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      for (const name of ['location', 'idempotency-key-expires', 'content-type', 'content-length', 'etag']) {
        expect([name, replay.headers[name]]).toEqual([name, first.headers[name]]);
      }
      expect(replay.headers['ratelimit-limit']).toBeDefined();
      expect(replay.headers['x-request-id']).toMatch(/^req_/);
    }
    expect(replays[0].headers['x-request-id']).not.toBe(replays[1].headers['x-request-id']);
    expect(await invoicesOf(company)).toBe(1);

    await sleep(50);
    const line = logs.requestLine(replays[0].headers['x-request-id'] as string);
    expect(line).toMatchObject({
      level: 'info',
      msg: 'request completed',
      req: { method: 'POST', url: CREATE },
      res: { statusCode: 201 },
      companyId: company.companyId,
      operation: 'sales.invoices.create',
      idempotencyKey: key,
    });
    const after = await scrape(t);
    const replayed = { operation: 'sales.invoices.create', outcome: 'replayed' };
    const timed = { method: 'POST', route: CREATE, status_class: '2xx' };
    const count = 'ledgerkey_http_request_duration_seconds_count';
    expect(sampleValue(after, 'ledgerkey_idempotency_requests_total', replayed)).toBe(
      (sampleValue(before, 'ledgerkey_idempotency_requests_total', replayed) ?? 0) + 2,
    );
    expect(sampleValue(after, count, timed)).toBe((sampleValue(before, count, timed) ?? 0) + 2);
  });

  it('a body that arrives in parts is replayed from its exact bytes; a new key sent so executes once', async () => {
    const company = await t.newCompany();
    const key = newKey();
    const bytes = invoiceBytes();
    const parts = [bytes.subarray(0, 40), bytes.subarray(40, 41), bytes.subarray(41)];

    const first = await rawPost(t, { headers: jsonHeaders(company, key, bytes), parts, pauseMs: 60 });
    const reached = entries.count;
    const replay = await rawPost(t, { headers: jsonHeaders(company, key, bytes), parts, pauseMs: 60 });

    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(entries.count).toBe(reached);
    expect(await invoicesOf(company)).toBe(1);
  });

  it.each<
    [
      string,
      (bytes: Buffer) => Omit<RawRequest, 'headers'> & { headers?: Record<string, string> },
      number,
      string | null,
    ]
  >([
    [
      'other bytes under the key',
      () => {
        const other = Buffer.from(JSON.stringify(anInvoice().withLine({ quantity: '3' }).build()), 'utf8');
        return { parts: [other], headers: { 'Content-Length': String(other.length) } };
      },
      422,
      'idempotency_key_reused',
    ],
    [
      'the same JSON compressed (Content-Encoding: gzip)',
      (bytes) => {
        const gzipped = gzipSync(bytes);
        return {
          parts: [gzipped],
          headers: { 'Content-Encoding': 'gzip', 'Content-Length': String(gzipped.length) },
        };
      },
      201,
      null,
    ],
    [
      'the same bytes, chunked (no Content-Length)',
      (bytes) => ({ parts: [bytes], headers: { 'Content-Length': '' } }),
      201,
      null,
    ],
    [
      'the same bytes to the path with a query string',
      (bytes) => ({ parts: [bytes], path: `${CREATE}?via=query` }),
      201,
      null,
    ],
    [
      'the same bytes as text/plain',
      (bytes) => ({ parts: [bytes], headers: { 'Content-Type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    ],
    [
      'the same bytes declared ISO-8859-1',
      (bytes) => ({ parts: [bytes], headers: { 'Content-Type': 'application/json; charset=iso-8859-1' } }),
      415,
      'unsupported_media_type',
    ],
    [
      'an invalid Idempotency-Key',
      (bytes) => ({ parts: [bytes], headers: { 'Idempotency-Key': '"unterminated' } }),
      400,
      'idempotency_key_invalid',
    ],
    [
      'an unknown API key',
      (bytes) => ({ parts: [bytes], headers: { Authorization: 'Bearer lk_unknown0000000000000000000000' } }),
      401,
      'unauthorized',
    ],
  ])(
    'leaves %s to the framework, which answers as without the front door',
    async (_case, variant, status, code) => {
      const { company, key, bytes, first } = await finishedKey(t);
      const { headers = {}, ...request } = variant(bytes);
      const all: Record<string, string> = { ...jsonHeaders(company, key, bytes), ...headers };
      if (all['Content-Length'] === '') delete all['Content-Length'];
      const reached = entries.count;

      const answer = await rawPost(t, { ...request, headers: all });

      expect(entries.count).toBe(reached + 1);
      expect(answer.status).toBe(status);
      if (code !== null) expect((JSON.parse(answer.text) as { code: string }).code).toBe(code);
      else {
        expect(answer.headers['idempotent-replayed']).toBe('true');
        expect(answer.text).toBe(first.text);
      }
      expect(await invoicesOf(company)).toBe(1);
    },
  );

  it('a read_only key of the company, verified recently, is refused 403 by the guard, not replayed', async () => {
    const { company, key, bytes } = await finishedKey(t);
    const created = await t.http
      .post('/v1/api-keys/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey('api-key'))
      .send({ scope: 'read_only' })
      .expect(201);
    const readOnly = { Authorization: `Bearer ${(created.body as { secret: string }).secret}` };
    await t.http.get('/v1/sales/invoices').set(readOnly).expect(200);
    const reached = entries.count;

    const answer = await rawPost(t, {
      headers: { ...jsonHeaders(company, key, bytes), ...readOnly },
      parts: [bytes],
    });

    expect(answer.status).toBe(403);
    expect(entries.count).toBe(reached + 1);
  });

  it('a revoked key gets 401 at once, though its replay is cached and the key was verified', async () => {
    const { company, key, bytes } = await finishedKey(t);
    const created = await t.http
      .post('/v1/api-keys/create')
      .set(company.auth)
      .set('Idempotency-Key', newKey('api-key'))
      .send({ scope: 'read_write' })
      .expect(201);
    const { id, secret } = created.body as { id: string; secret: string };
    const second = { ...company, auth: { Authorization: `Bearer ${secret}` } };
    const replayed = await rawPost(t, { headers: jsonHeaders(second, key, bytes), parts: [bytes] });
    expect(replayed.headers['idempotent-replayed']).toBe('true');

    await t.http.post(`/v1/api-keys/${id}/revoke`).set(company.auth).expect(200);
    const answer = await rawPost(t, { headers: jsonHeaders(second, key, bytes), parts: [bytes] });

    expect(answer.status).toBe(401);
  });

  it('a client that goes away mid-body leaves nothing behind: the next requests are answered', async () => {
    const { company, key, bytes, first } = await finishedKey(t);
    await new Promise<void>((resolve) => {
      const request = httpRequest(`${t.baseUrl}${CREATE}`, {
        method: 'POST',
        headers: jsonHeaders(company, key, bytes),
      });
      request.on('error', () => resolve());
      request.write(bytes.subarray(0, 20), () => setTimeout(() => request.destroy(), 30));
      request.on('close', () => resolve());
    });
    const newOne = invoiceBytes();
    const otherKey = newKey();

    const replay = await rawPost(t, { headers: jsonHeaders(company, key, bytes), parts: [bytes] });
    const created = await rawPost(t, { headers: jsonHeaders(company, otherKey, newOne), parts: [newOne] });

    expect(replay.status).toBe(201);
    expect(replay.text).toBe(first.text);
    expect(created.status).toBe(201);
    expect(await invoicesOf(company)).toBe(2);
  });
});

describe('with RATE_LIMIT_PER_SECOND=1 (bursts of 2)', () => {
  let t: TestApp;
  let entries: { count: number };
  // A database of its own: the limit is shared out among the API processes live on the database,
  // and the suites running beside this one would leave it less than one request per second.
  let database: IsolatedDatabase;

  beforeAll(async () => {
    database = await createIsolatedDatabase('front_door_rate');
    t = await startTestApp({ RATE_LIMIT_PER_SECOND: '1', DATABASE_URL: database.url });
    entries = expressEntries(t);
  });

  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  it('a replay over the company limit is not answered here: the guard refuses it 429, and no replay is counted', async () => {
    const { company, key, bytes } = await finishedKey(t);
    const replayed = await rawPost(t, { headers: jsonHeaders(company, key, bytes), parts: [bytes] });
    const before = await scrape(t);
    const reached = entries.count;

    const refused = await rawPost(t, { headers: jsonHeaders(company, key, bytes), parts: [bytes] });

    const labels = { operation: 'sales.invoices.create', outcome: 'replayed' };
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(refused.status).toBe(429);
    expect((JSON.parse(refused.text) as { code: string }).code).toBe('rate_limited');
    expect(refused.headers['retry-after']).toBeDefined();
    expect(entries.count).toBe(reached + 1);
    expect(sampleValue(await scrape(t), 'ledgerkey_idempotency_requests_total', labels)).toBe(
      sampleValue(before, 'ledgerkey_idempotency_requests_total', labels),
    );
  });
});

describe('with IDEMPOTENCY_REPLAY_CACHE_SIZE=0', () => {
  let t: TestApp;
  let entries: { count: number };

  beforeAll(async () => {
    t = await startTestApp({ IDEMPOTENCY_REPLAY_CACHE_SIZE: '0' });
    entries = expressEntries(t);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('there is no front door: every replay is read by the route from the database', async () => {
    const { company, key, bytes, first } = await finishedKey(t);
    const reached = entries.count;

    const replay = await rawPost(t, { headers: jsonHeaders(company, key, bytes), parts: [bytes] });

    expect(replay.text).toBe(first.text);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(entries.count).toBe(reached + 1);
  });
});
