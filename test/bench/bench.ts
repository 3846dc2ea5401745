/**
 * `npm run bench`: throughput and latency of idempotent invoice creation against a real API
 * process and PostgreSQL, compared with the database's own limit (the same statements through
 * `pg` directly). Prints a table with ratios and writes docs/performance/results.json and
 * docs/performance/chart.svg. Not part of `npm test`.
 *
 * DATABASE_URL: the server to use (a fresh database is created on it); else an embedded one.
 * BENCH_DURATION_S (default 10), BENCH_CONNECTIONS (default 16), BENCH_KEYS (default 1000000).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { Client, Pool } from 'pg';
import { createDataSource, runMigrations } from '../../libs/database/src/data-source.factory';
import { quoteIdentifier, startEmbeddedPostgres } from '../../libs/database/src/embedded-postgres';
import { installJobQueue } from '../../libs/outbox/src/job-queue';
import { MIGRATIONS } from '../../migrations';

/** Compiled to dist/bench/test/bench/: the repository is four levels up. */
const ROOT = resolve(__dirname, '../../../..');
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const PREEXISTING_KEYS = Number(process.env.BENCH_KEYS ?? 1_000_000);
const POOL_SIZE = 10;
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const CREATE = '/v1/sales/invoices/create';

interface Figures {
  name: string;
  label: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

interface Company {
  companyId: string;
  apiKey: string;
}

const invoiceBody = (n: number): string =>
  JSON.stringify({
    customer: { name: 'UAB Bench', countryCode: 'LT', vatId: 'LT100001234567' },
    lines: [
      { description: 'Consulting', quantity: '2', unitPrice: 5000 + (n % 100), vatRate: '21' },
      { description: 'Book', quantity: '1', unitPrice: 1500, vatRate: '9' },
    ],
  });

async function main(): Promise<void> {
  const started = Date.now();
  const { serverUrl, cleanup } = await databaseServer();
  const name = `ledgerkey_bench_${Date.now()}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
  const url = Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString();
  const dataSource = await createDataSource({
    url,
    poolSize: 2,
    applicationName: 'ledgerkey-bench',
    migrations: MIGRATIONS,
  }).initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();
  await installJobQueue(url);

  const results: Figures[] = [];
  const apis: ChildProcess[] = [];
  try {
    const api = await startApi(url, {});
    apis.push(api.child);
    const companies = await Promise.all(Array.from({ length: 50 }, (_, i) => newCompany(api.baseUrl, i)));
    const single = await newCompany(api.baseUrl, 999);

    await warmUp(api.baseUrl, companies[0]);
    results.push(await createLoad('a', 'create, 50 companies', api.baseUrl, companies));
    results.push(await createLoad('b', 'create, one company (one number sequence)', api.baseUrl, [single]));
    results.push(await replayLoad('d', 'replay of an existing key', api.baseUrl, companies[1]));
    results.push(await rawSqlBaseline('e', 'raw SQL, same statements, same concurrency', url, companies));
    await stop(api.child);

    const bare = await startApi(url, { BENCHMARK_DISABLE_IDEMPOTENCY: 'true' });
    apis.push(bare.child);
    await warmUp(bare.baseUrl, companies[2]);
    results.push(await createLoad('c', 'create without the idempotency layer', bare.baseUrl, companies));
    await stop(bare.child);

    const big = await startApi(url, {});
    apis.push(big.child);
    const crowded = await newCompany(big.baseUrl, 1000);
    await fillKeys(url, crowded.companyId, PREEXISTING_KEYS);
    results.push(
      await createLoad('f1', `create, ${PREEXISTING_KEYS} keys in the table`, big.baseUrl, [crowded]),
    );
    results.push(
      await replayLoad('f2', `replay, ${PREEXISTING_KEYS} keys in the table`, big.baseUrl, crowded),
    );
    await stop(big.child);
  } finally {
    for (const child of apis) child.kill('SIGKILL');
    await admin.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    await cleanup();
  }

  const by = (name: string) => results.find((r) => r.name === name) as Figures;
  const ratios = {
    'a/e (service vs database limit)': by('a').requestsPerSecond / by('e').requestsPerSecond,
    'a/c (with vs without idempotency)': by('a').requestsPerSecond / by('c').requestsPerSecond,
    'd/a (replay vs create)': by('d').requestsPerSecond / by('a').requestsPerSecond,
  };
  printTable(results, ratios);
  const report = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    settings: {
      durationSeconds: DURATION_S,
      connections: CONNECTIONS,
      poolSize: POOL_SIZE,
      preexistingKeys: PREEXISTING_KEYS,
    },
    results,
    ratios,
    totalSeconds: Math.round((Date.now() - started) / 1000),
  };
  mkdirSync(join(ROOT, 'docs/performance'), { recursive: true });
  writeFileSync(join(ROOT, 'docs/performance/results.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(ROOT, 'docs/performance/chart.svg'), chart(results));
  console.log(`\nwrote docs/performance/results.json and chart.svg in ${report.totalSeconds} s`);
}

async function databaseServer(): Promise<{ serverUrl: string; cleanup: () => Promise<void> }> {
  if (process.env.DATABASE_URL)
    return { serverUrl: process.env.DATABASE_URL, cleanup: async () => undefined };
  const dataDir = mkdtempSync(join(tmpdir(), 'ledgerkey-bench-'));
  const embedded = await startEmbeddedPostgres({ dataDir, database: 'postgres' });
  return {
    serverUrl: embedded.url,
    cleanup: async () => {
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function startApi(
  url: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; baseUrl: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/api/src/main.js')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_API_TOKEN: ADMIN_TOKEN,
      SEED_DEMO_COMPANY: 'false',
      RUN_WORKER: 'false',
      LOG_LEVEL: 'error',
      DATABASE_POOL_SIZE: String(POOL_SIZE),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const baseUrl = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error('API did not start within 60 s')), 60_000);
    lines.on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`API exited with ${code}`)));
  });
  return { child, baseUrl };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

async function newCompany(baseUrl: string, n: number): Promise<Company> {
  const response = await fetch(`${baseUrl}/admin/companies`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${ADMIN_TOKEN}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': `bench-company-${randomUUID()}`,
    },
    body: JSON.stringify({ name: `Bench ${n}`, countryCode: 'LT', currency: 'EUR' }),
  });
  if (response.status !== 201) throw new Error(`company: ${response.status} ${await response.text()}`);
  return (await response.json()) as Company;
}

async function warmUp(baseUrl: string, company: Company): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    await fetch(`${baseUrl}${CREATE}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${company.apiKey}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': `warm-${randomUUID()}`,
      },
      body: invoiceBody(i),
    });
  }
}

function fromAutocannon(name: string, label: string, result: autocannon.Result): Figures {
  return {
    name,
    label,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.non2xx + result.timeouts,
  };
}

async function createLoad(
  name: string,
  label: string,
  baseUrl: string,
  companies: Company[],
): Promise<Figures> {
  let n = 0;
  const result = await autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: [
      {
        method: 'POST',
        path: CREATE,
        setupRequest: (request) => {
          n += 1;
          const company = companies[n % companies.length];
          request.headers = {
            authorization: `Bearer ${company.apiKey}`,
            'content-type': 'application/json',
            'idempotency-key': `bench-${name}-${n}-${process.pid}`,
          };
          request.body = invoiceBody(n);
          return request;
        },
      },
    ],
  });
  console.log(`(${name}) ${label}: ${Math.round(result.requests.average)} req/s`);
  return fromAutocannon(name, label, result);
}

/**
 * Replays: 400 keys created first, then requested round-robin. A finished key is read without a
 * lock, so concurrent requests on one key all replay.
 */
async function replayLoad(name: string, label: string, baseUrl: string, company: Company): Promise<Figures> {
  const keys: string[] = [];
  for (let i = 0; i < 400; i += 1) {
    const key = `bench-replay-${randomUUID()}`;
    const response = await fetch(`${baseUrl}${CREATE}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${company.apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body: invoiceBody(i),
    });
    if (response.status !== 201) throw new Error(`replay setup: ${response.status}`);
    keys.push(key);
  }
  let n = 0;
  const result = await autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: [
      {
        method: 'POST',
        path: CREATE,
        setupRequest: (request) => {
          n += 1;
          const i = n % keys.length;
          request.headers = {
            authorization: `Bearer ${company.apiKey}`,
            'content-type': 'application/json',
            'idempotency-key': keys[i],
          };
          request.body = invoiceBody(i);
          return request;
        },
      },
    ],
  });
  console.log(`(${name}) ${label}: ${Math.round(result.requests.average)} req/s`);
  return fromAutocannon(name, label, result);
}

/**
 * The statements one idempotent create runs, in the same order and round trips, through `pg`
 * with the API's pool size and the benchmark's concurrency: what PostgreSQL itself allows here.
 */
async function rawSqlBaseline(
  name: string,
  label: string,
  url: string,
  companies: Company[],
): Promise<Figures> {
  const pool = new Pool({ connectionString: url, max: POOL_SIZE });
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const deadline = Date.now() + DURATION_S * 1000;
  const worker = async (): Promise<void> => {
    while (Date.now() < deadline) {
      n += 1;
      const company = companies[n % companies.length];
      const key = `raw-${n}-${randomUUID()}`;
      const t0 = performance.now();
      try {
        await oneCreate(pool, company, key, n);
        latencies.push(performance.now() - t0);
      } catch {
        errors += 1;
      }
    }
  };
  const began = Date.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const seconds = (Date.now() - began) / 1000;
  await pool.end();
  latencies.sort((x, y) => x - y);
  const at = (q: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]);
  console.log(`(${name}) ${label}: ${Math.round(latencies.length / seconds)} req/s`);
  return {
    name,
    label,
    requestsPerSecond: Math.round(latencies.length / seconds),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    errors,
  };
}

async function oneCreate(pool: Pool, company: Company, key: string, n: number): Promise<void> {
  // No API-key lookup: the service caches verified keys, so a create runs none either.
  const client = await pool.connect();
  try {
    await client.query('START TRANSACTION');
    await client.query(`SELECT * FROM claim_idempotency_key($1, $2, $3, $4)`, [
      company.companyId,
      'sales.invoices.create',
      key,
      new Date(),
    ]);
    const [{ last_value: sequence }] = (
      await client.query(
        `INSERT INTO document_sequences AS s (company_id, document_type, series, last_value)
         VALUES ($1, 'invoice', $2, 1)
         ON CONFLICT (company_id, document_type, series) DO UPDATE SET last_value = s.last_value + 1
         RETURNING last_value`,
        [company.companyId, 'RAW'],
      )
    ).rows;
    const id = randomUUID();
    const now = new Date();
    await client.query(
      `WITH invoice AS (
         INSERT INTO invoices (id, company_id, series, sequence, number, status, order_id, currency, issue_date,
                               due_date, customer, notes, vat_breakdown, net_total, vat_total, gross_total, created_at)
         VALUES ($1, $2, 'RAW', $3, $4, 'issued', NULL, 'EUR', $5, NULL, $6, NULL, $7, $8, $9, $10, $11)
         ON CONFLICT (company_id, order_id) WHERE order_id IS NOT NULL DO NOTHING RETURNING id
       ), lines AS (
         INSERT INTO invoice_lines (invoice_id, company_id, position, description, quantity, unit_price, vat_rate, net_amount)
         SELECT invoice.id, $2, l.position, l.description, l.quantity, l.unit_price, l.vat_rate, l.net_amount
           FROM invoice, unnest($12::int[], $13::text[], $14::numeric[], $15::bigint[], $16::numeric[], $17::bigint[])
                AS l(position, description, quantity, unit_price, vat_rate, net_amount)
       ) SELECT count(*)::int AS inserted FROM invoice`,
      [
        id,
        company.companyId,
        sequence,
        `RAW-${String(sequence).padStart(6, '0')}`,
        now.toISOString().slice(0, 10),
        JSON.stringify({ name: 'UAB Bench', countryCode: 'LT' }),
        JSON.stringify([
          { vatRate: '21', netAmount: 10000, vatAmount: 2100 },
          { vatRate: '9', netAmount: 1500, vatAmount: 135 },
        ]),
        11500,
        2235,
        13735,
        now,
        [1, 2],
        ['Consulting', 'Book'],
        ['2', '1'],
        [5000 + (n % 100), 1500],
        ['21', '9'],
        [10000, 1500],
      ],
    );
    await client.query(
      `WITH entry AS (
         INSERT INTO journal_entries (id, company_id, currency, source_type, source_id, memo, posted_at, line_count)
         VALUES ($1, $2, 'EUR', 'invoice', $3, $4, $5, cardinality($6::text[])) RETURNING id
       ) INSERT INTO journal_lines (entry_id, company_id, line_no, account, debit, credit)
         SELECT entry.id, $2, l.line_no, l.account, l.debit, l.credit
           FROM entry, unnest($6::text[], $7::bigint[], $8::bigint[]) WITH ORDINALITY AS l(account, debit, credit, line_no)`,
      [
        randomUUID(),
        company.companyId,
        id,
        `Invoice RAW-${sequence}`,
        now,
        ['accounts_receivable', 'revenue', 'vat_payable'],
        [13735, 0, 0],
        [0, 11500, 2235],
      ],
    );
    await client.query(
      `WITH next AS (
         INSERT INTO event_sequences AS s (company_id, last_position) VALUES ($2, 1)
         ON CONFLICT (company_id) DO UPDATE SET last_position = s.last_position + 1 RETURNING last_position
       ), event AS (
         INSERT INTO events (id, company_id, position, type, data, created_at)
         SELECT $1, $2, next.last_position, $3, $4, $5 FROM next RETURNING id
       ) SELECT graphile_worker.add_job($6, json_build_object('eventId', event.id), job_key := 'fan_out:' || event.id) FROM event`,
      [
        randomUUID(),
        company.companyId,
        'invoice.created',
        JSON.stringify({ object: { id } }),
        now,
        'fan_out_event',
      ],
    );
    await client.query(
      `INSERT INTO idempotency_records (company_id, operation, idempotency_key, fingerprint, state,
                                        response_status, response_headers, response_body, expires_at)
       VALUES ($1, $2, $3, $4, 'completed', $5, $6, $7, $8)`,
      [
        company.companyId,
        'sales.invoices.create',
        key,
        createHash('sha256').update(key).digest(),
        201,
        JSON.stringify({
          'Content-Type': 'application/json; charset=utf-8',
          Location: `/v1/sales/invoices/${id}`,
        }),
        JSON.stringify({ id }),
        new Date(Date.now() + 86_400_000),
      ],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Bulk-loads expired-in-a-day keys for one company: the table as a busy day leaves it. */
async function fillKeys(url: string, companyId: string, count: number): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  const t0 = Date.now();
  await client.query(
    `INSERT INTO idempotency_records (company_id, operation, idempotency_key, fingerprint, state,
                                      response_status, response_headers, response_body, expires_at)
     SELECT $1, 'sales.invoices.create', 'filler-' || g, sha256(g::text::bytea), 'completed', 201, '{}',
            '{"filler":true}',
            now() + interval '1 day'
       FROM generate_series(1, $2::int) AS g`,
    [companyId, count],
  );
  await client.query('ANALYZE idempotency_records');
  await client.end();
  console.log(`loaded ${count} keys in ${Math.round((Date.now() - t0) / 1000)} s`);
}

function printTable(results: Figures[], ratios: Record<string, number>): void {
  console.log('\n| case | what | req/s | p50 ms | p99 ms | errors |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const r of results) {
    console.log(
      `| ${r.name} | ${r.label} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.errors} |`,
    );
  }
  console.log('\n| ratio | value |\n|---|---:|');
  for (const [label, value] of Object.entries(ratios)) console.log(`| ${label} | ${value.toFixed(2)} |`);
}

/** A small horizontal bar chart of requests per second. */
function chart(results: Figures[]): string {
  const width = 720;
  const barHeight = 26;
  const left = 330;
  const max = Math.max(...results.map((r) => r.requestsPerSecond), 1);
  const rows = results
    .map((r, i) => {
      const y = 40 + i * (barHeight + 10);
      const w = Math.round(((width - left - 80) * r.requestsPerSecond) / max);
      const label = `(${r.name}) ${r.label}`.replace(/&/g, '&amp;').replace(/</g, '&lt;');
      return (
        `<text x="${left - 8}" y="${y + 17}" text-anchor="end" font-size="12">${label}</text>` +
        `<rect x="${left}" y="${y}" width="${w}" height="${barHeight}" fill="#3b6ea5"/>` +
        `<text x="${left + w + 6}" y="${y + 17}" font-size="12">${r.requestsPerSecond} req/s</text>`
      );
    })
    .join('\n  ');
  const height = 60 + results.length * (barHeight + 10);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">
  <text x="10" y="22" font-size="14" font-weight="bold">ledgerkey: requests per second (higher is better)</text>
  ${rows}
</svg>
`;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
