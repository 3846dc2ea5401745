import { execFileSync } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { createDataSource, runMigrations } from '../../libs/database/src/data-source.factory';
import { quoteIdentifier } from '../../libs/database/src/embedded-postgres';
import { installJobQueue } from '../../libs/jobs/src/job-queue';
import { MIGRATIONS } from '../../migrations';
import { type BenchConfig, ROOT } from './bench-config';
import { type Company, type Figures, type KeyedRequest, newCompany, postCreate } from './load';
import { pgbenchVersion } from './pgbench-limit';
import { type Server, startApi, stop } from './processes';
import { redisVersion } from './redis-probe';

/** What the cases of `npm run bench` share: the run, its databases and companies, and the machine. */

export const BENCH_DIST = join(ROOT, 'dist/bench/test/bench');

export interface Run {
  config: BenchConfig;
  serverUrl: string;
  admin: Client;
  databases: string[];
  dir: string;
  results: Figures[];
  /** Filled by the first API process that needs them. */
  companies?: { many: Company[]; single: Company; replay: Company };
  /** A replay answer of ledgerkey, served by the bare node:http server. */
  replayAnswer?: { status: number; headers: Record<string, string>; body: string };
  statements?: string[];
}

/** Without the replay cache: every replay reads PostgreSQL (`replay-uncached`, `keys-replay`). */
export const REPLAY_CACHE_OFF = { IDEMPOTENCY_REPLAY_CACHE_SIZE: '0' };

/** One pass over the replay keys, one at a time, before a fresh process is measured. */
export async function warmUpReplays(baseUrl: string, keys: KeyedRequest[]): Promise<void> {
  for (const { apiKey, key, body } of keys) {
    const response = await postCreate(baseUrl, { companyId: '', apiKey }, key, body);
    await response.arrayBuffer();
    if (response.headers.get('idempotent-replayed') !== 'true') {
      throw new Error(`replay warm-up: ${response.status} without Idempotent-Replayed`);
    }
  }
}

/** The companies every ledgerkey case uses, created once through the admin API. */
export async function companies(run: Run, api: Server): Promise<NonNullable<Run['companies']>> {
  if (!run.companies) {
    run.companies = {
      many: await Promise.all(Array.from({ length: 50 }, (_, i) => newCompany(api.baseUrl, i))),
      single: await newCompany(api.baseUrl, 900),
      replay: await newCompany(api.baseUrl, 901),
    };
  }
  return run.companies;
}

export async function replayAnswer(
  baseUrl: string,
  company: Company,
  key: string,
  body: string,
): Promise<NonNullable<Run['replayAnswer']>> {
  const response = await postCreate(baseUrl, company, key, body);
  const headers: Record<string, string> = {};
  for (const name of [
    'content-type',
    'location',
    'idempotent-replayed',
    'idempotency-key-expires',
    'x-request-id',
  ]) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { status: response.status, headers, body: await response.text() };
}

/**
 * Waits until the worker has nothing left to do now (at most 120 s) — no runnable graphile-worker
 * job and no due webhook delivery — so one case's backlog does not load the next. Returns the
 * backlog found and how long it took.
 */
export async function drainJobs(url: string): Promise<{ jobs: number; seconds: number }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  const t0 = Date.now();
  let first = -1;
  try {
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT (SELECT count(*) FROM graphile_worker.jobs WHERE attempts < max_attempts AND run_at <= now())::int
              + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at <= now())::int AS n`,
      );
      if (first < 0) first = rows[0].n;
      if (rows[0].n === 0 || Date.now() - t0 > 120_000) break;
      await sleep(250);
    }
  } catch {
    // no graphile-worker schema: nothing to drain
  } finally {
    await client.end();
  }
  return { jobs: Math.max(first, 0), seconds: Math.round((Date.now() - t0) / 100) / 10 };
}

/** Companies for cases that start no API process of their own. */
export async function companiesWithoutLoad(run: Run, url: string): Promise<NonNullable<Run['companies']>> {
  if (run.companies) return run.companies;
  const api = await startApi(url, { RUN_WORKER: 'false' }, run.dir, run.config);
  try {
    return await companies(run, api);
  } finally {
    await stop(api);
  }
}

export async function emptyDatabase(run: Run, suffix: string): Promise<string> {
  const name = `ledgerkey_bench_${Date.now()}_${suffix}`;
  await run.admin.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
  run.databases.push(name);
  return Object.assign(new URL(run.serverUrl), { pathname: `/${name}` }).toString();
}

export async function migratedDatabase(run: Run, suffix: string): Promise<string> {
  const url = await emptyDatabase(run, suffix);
  const dataSource = await (
    await createDataSource({ url, poolSize: 2, applicationName: 'ledgerkey-bench', migrations: MIGRATIONS })
  ).initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();
  await installJobQueue(url);
  return url;
}

export async function machineInfo(run: Run): Promise<Record<string, unknown>> {
  const { rows } = await run.admin.query<{ server_version: string }>('SHOW server_version');
  const redis = await redisVersion(run.config.redisUrl);
  let kernel = release();
  try {
    kernel = execFileSync('uname', ['-sr']).toString().trim();
  } catch {
    // keep os.release()
  }
  return {
    cpuCount: cpus().length,
    cpuModel: cpus()[0]?.model.trim(),
    memoryGb: Math.round(totalmem() / 2 ** 30),
    kernel,
    node: process.version,
    postgres: rows[0].server_version,
    postgresServer: run.config.serverUrl ? 'DATABASE_URL' : 'embedded',
    pgbench: await pgbenchVersion(),
    redis: 'version' in redis ? redis.version : `unavailable: ${redis.unavailable}`,
  };
}

export function skipped(name: string, label: string, reason: string): Figures {
  return {
    name,
    label,
    requestsPerSecond: 0,
    p50Ms: 0,
    p99Ms: 0,
    errors: 0,
    completed: 0,
    seconds: 0,
    skipped: reason,
  };
}
