/**
 * `npm run bench`: the measurements behind issue 11. Real API processes on a real PostgreSQL,
 * driven by autocannon; compared with the setup a NestJS team would reach for (Redis plugin),
 * with the database's own limit (pgbench running the service's statements) and with a bare
 * node:http server. Prints every case and every goal with PASS/MISS, and writes results.json and
 * chart.svg (docs/performance/ by default). Not part of `npm test`. docs/performance.md explains
 * each case; BENCH_* variables are listed in bench-config.ts.
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Pool } from 'pg';
import { createDataSource, runMigrations } from '../../libs/database/src/data-source.factory';
import { quoteIdentifier } from '../../libs/database/src/embedded-postgres';
import { installJobQueue } from '../../libs/jobs/src/job-queue';
import { MIGRATIONS } from '../../migrations';
import { type BenchConfig, type Group, ROOT, loadBenchConfig } from './bench-config';
import {
  ADMIN_TOKEN,
  type Company,
  type Figures,
  type InterleavedLoad,
  type KeyedRequest,
  createLoad,
  createsOver,
  figuresFromLatencies,
  interleavedLoads,
  invoiceBody,
  newCompany,
  postCreate,
  replayKeys,
  replaysOf,
  warmUp,
} from './load';
import { PGBENCH, pgbenchLoad, pgbenchVersion, prepareScripts } from './pgbench-limit';
import { cpuPerRequest, cpuTimes, describeCpu } from './cpu-accounting';
import {
  type Server,
  databaseServer,
  killAll,
  rssMb,
  sampleRss,
  startApi,
  startServer,
  stop,
} from './processes';
import { BASELINE_SCHEMA } from './redis-baseline/baseline-schema';
import { deleteKeys, redisCommand, redisVersion } from './redis-probe';
import { chart, evaluateGoals, printReport } from './report';
import {
  type CreateStatements,
  captureCreateStatements,
  describeStatements,
  pgbenchScript,
  runCreateThroughPg,
} from './service-statements';

const BENCH_DIST = join(ROOT, 'dist/bench/test/bench');

interface Run {
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

async function main(): Promise<void> {
  const config = loadBenchConfig();
  const started = Date.now();
  const loadBefore = loadavg();
  const dir = mkdtempSync(join(tmpdir(), 'ledgerkey-bench-'));
  mkdirSync(config.outDir, { recursive: true });
  const server = await databaseServer(config.serverUrl, 'ledgerkey-bench-pg-');
  const admin = new Client({ connectionString: server.serverUrl });
  await admin.connect();
  const run: Run = { config, serverUrl: server.serverUrl, admin, databases: [], dir, results: [] };
  const on = (group: Group) => config.groups.has(group);
  console.log(
    `bench: ${config.seconds} s per case, ${config.connections} connections, groups ${[...config.groups].join(',')}; logs in ${dir}`,
  );
  let machine: Record<string, unknown>;
  try {
    machine = await machineInfo(run);
    const url = await migratedDatabase(run, 'main');
    // Up beside ours, so each Redis case runs in turns with its ledgerkey case (see TURNS).
    const redisSetup = on('redis') ? await startRedisSetup(run) : undefined;
    try {
      if (on('ours')) await ledgerkeyDefaultStart(run, url, redisSetup);
      else if (redisSetup) await redisSetupAlone(run, redisSetup);
      // Still up: its create runs again in turns with ours without the idempotency layer.
      if (on('worker') || on('idempotency') || on('scale'))
        await ledgerkeyWithoutWorker(run, url, redisSetup);
    } finally {
      await redisSetup?.stop();
    }
    if (on('pgbench') || on('node')) await databaseLimit(run, url);
    if (on('http')) await bareHttp(run, url);
    if (on('keys')) await manyKeys(run);
  } finally {
    killAll();
    for (const name of run.databases) {
      await admin
        .query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`)
        .catch(() => undefined);
    }
    await admin.end();
    await server.cleanup();
  }

  const goals = evaluateGoals(run.results, config.storedKeys);
  printReport(run.results, goals);
  const report = {
    measuredAt: new Date().toISOString(),
    machine: { ...machine, loadAverageBefore: loadBefore, loadAverageAfter: loadavg() },
    settings: {
      secondsPerCase: config.seconds,
      connections: config.connections,
      apiPoolSize: config.poolSize,
      storedKeys: config.storedKeys,
      logLevel: config.logLevel,
      pgbenchProtocol: config.pgbenchProtocol,
      pgbenchClients: config.pgbenchClients,
      groups: [...config.groups],
    },
    statementsPerCreate: run.statements ?? null,
    results: run.results,
    goals,
    totalSeconds: Math.round((Date.now() - started) / 1000),
  };
  writeFileSync(join(config.outDir, 'results.json'), `${JSON.stringify(report, null, 2)}\n`);
  const subtitle =
    `${String(machine.cpuCount)} CPUs, Node ${process.version}, PostgreSQL ${String(machine.postgres)}, ` +
    `${config.seconds} s per case, ${config.connections} connections, ${report.measuredAt.slice(0, 10)}`;
  writeFileSync(join(config.outDir, 'chart.svg'), chart(run.results, goals, subtitle));
  console.log(`\nwrote ${join(config.outDir, 'results.json')} and chart.svg in ${report.totalSeconds} s`);
  if (config.keepLogs) console.log(`logs kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------
// ledgerkey

/** Without the replay cache: every replay reads PostgreSQL (`replay-uncached`, `keys-replay`). */
const REPLAY_CACHE_OFF = { IDEMPOTENCY_REPLAY_CACHE_SIZE: '0' };

/**
 * Cases compared in turns (a ledgerkey case and its Redis-setup case; `keys-replay` and its
 * control) each get `BENCH_SECONDS` in this many slices, A B, B A …, so their ratio is about them
 * and not about what the machine did in the minutes between them.
 */
const TURNS = 4;

/** A case's load and, for creates, where its invoices go (`database`: checked after the case). */
type TurnLoad = InterleavedLoad & { database?: { url: string; companies: Company[] } };

/** Creates over `companies` of the setup at `baseUrl`, whose invoices go to database `url`. */
function createCase(
  name: string,
  label: string,
  baseUrl: string,
  url: string,
  companies: Company[],
): TurnLoad {
  return { name, label, urls: baseUrl, next: createsOver(name, companies), database: { url, companies } };
}

/**
 * A case alone, or in turns with others (its Redis-setup case, when that setup is up; the three
 * ways of starting ledgerkey). A create case must have stored one invoice per 2xx answer (cases on
 * one database together): a replay counted as a create fails the run.
 */
async function inTurns(
  run: Run,
  first: TurnLoad,
  ...others: Array<TurnLoad | undefined>
): Promise<Figures[]> {
  const loads = [first, ...others.filter((load): load is TurnLoad => load !== undefined)];
  // Loads on one database are checked together: their creates add up.
  const databases = new Map<string, NonNullable<TurnLoad['database']>>();
  for (const { database } of loads) {
    if (!database) continue;
    const known = databases.get(database.url)?.companies ?? [];
    databases.set(database.url, {
      url: database.url,
      companies: [...new Set([...known, ...database.companies])],
    });
  }
  const before = await Promise.all([...databases.values()].map(invoicesOf));
  const figures =
    loads.length > 1
      ? await interleavedLoads(loads, run.config, TURNS)
      : [await createLoad(first.name, first.label, first.urls, run.config, first.next)];
  const after = await Promise.all([...databases.values()].map(invoicesOf));
  [...databases.keys()].forEach((url, index) => {
    const cases = figures.filter((_, load) => loads[load].database?.url === url);
    const answered = cases.reduce((sum, case_) => sum + case_.completed, 0);
    const stored = after[index] - before[index];
    if (stored < answered) {
      throw new Error(
        `${cases.map((c) => c.name).join(' + ')}: ${answered} creates answered, ${stored} invoices stored`,
      );
    }
  });
  return figures;
}

async function invoicesOf(database: TurnLoad['database']): Promise<number> {
  if (!database) return 0;
  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM invoices WHERE company_id = ANY($1::uuid[])',
      [database.companies.map((company) => company.companyId)],
    );
    return rows[0].n;
  } finally {
    await client.end();
  }
}

/**
 * Default start (the worker runs in the API process): create, single series, replay (answered
 * from the replay cache), memory; then the same replays on a second process without the cache.
 */
async function ledgerkeyDefaultStart(run: Run, url: string, versus: RedisSetup | undefined): Promise<void> {
  const { config } = run;
  const api = await startApi(url, {}, run.dir, config);
  let keys: KeyedRequest[];
  try {
    const { many, single, replay } = await companies(run, api);
    await warmUp(api.baseUrl, many);
    await drainJobs(url);
    // Idle as after the load: the same quiet time (the idle collection runs in both).
    await sleep(config.settleSeconds * 1000);
    const idleRssMb = rssMb(api.child.pid as number);
    const sampler = sampleRss(api.child.pid as number);
    const [create, redisCreate] = await inTurns(
      run,
      createCase(
        'create',
        'create, 50 companies (default start: worker in the process)',
        api.baseUrl,
        url,
        many,
      ),
      versus && redisCases(versus).create,
    );
    const underLoad = sampler.stop();
    const backlog = await drainJobs(url);
    await sleep(config.settleSeconds * 1000);
    create.extra = {
      idleRssMb,
      peakRssMb: Math.max(...underLoad),
      meanRssMb: Math.round(underLoad.reduce((a, b) => a + b, 0) / Math.max(underLoad.length, 1)),
      afterRssMb: rssMb(api.child.pid as number),
      settleSeconds: config.settleSeconds,
      jobBacklogAfterLoad: backlog.jobs,
      jobDrainSeconds: backlog.seconds,
    };
    console.log(`  memory: ${JSON.stringify(create.extra)}`);
    run.results.push(create, ...(redisCreate ? [redisCreate] : []));

    const [singleFigures, redisSingle] = await inTurns(
      run,
      createCase('single', 'create, one company (one number series)', api.baseUrl, url, [single]),
      versus && redisCases(versus).single,
    );
    const singleBacklog = await drainJobs(url);
    singleFigures.extra = { jobBacklogAfterLoad: singleBacklog.jobs, jobDrainSeconds: singleBacklog.seconds };
    run.results.push(singleFigures, ...(redisSingle ? [redisSingle] : []));

    // Created by this process: their answers are in its replay cache from the first request on.
    keys = await replayKeys(api.baseUrl, replay);
    run.replayAnswer = await replayAnswer(api.baseUrl, replay, keys[0].key, keys[0].body);
    await drainJobs(url);
    run.results.push(
      ...(await inTurns(
        run,
        {
          name: 'replay',
          label: 'replay of a finished key (from the replay cache)',
          urls: api.baseUrl,
          next: replaysOf(keys),
        },
        versus && (await redisReplayCase(versus)),
      )),
    );
  } finally {
    await stop(api);
  }

  const uncached = await startApi(url, REPLAY_CACHE_OFF, run.dir, config);
  try {
    const { many } = await companies(run, uncached);
    await warmUp(uncached.baseUrl, many);
    await warmUpReplays(uncached.baseUrl, keys);
    await drainJobs(url);
    run.results.push(
      await createLoad(
        'replay-uncached',
        'replay of a finished key, IDEMPOTENCY_REPLAY_CACHE_SIZE=0 (one PostgreSQL read)',
        uncached.baseUrl,
        config,
        replaysOf(keys),
      ),
    );
  } finally {
    await stop(uncached);
  }
}

/** One pass over the replay keys, one at a time, before a fresh process is measured. */
async function warmUpReplays(baseUrl: string, keys: KeyedRequest[]): Promise<void> {
  for (const { apiKey, key, body } of keys) {
    const response = await postCreate(baseUrl, { companyId: '', apiKey }, key, body);
    await response.arrayBuffer();
    if (response.headers.get('idempotent-replayed') !== 'true') {
      throw new Error(`replay warm-up: ${response.status} without Idempotent-Replayed`);
    }
  }
}

/**
 * The same create three ways, in turns (each process up, one loaded at a time): default start
 * again (`create-default`), RUN_WORKER=false, and RUN_WORKER=false without the idempotency layer;
 * then two processes. The worker and layer goals compare cases of these turns, not cases measured
 * minutes apart. With the layer's variant, the Redis setup's create runs in the same turns
 * (`redis-create-again`): how ours compares with it when ours stores no key at all, the ceiling
 * of what the idempotency layer could give the create goal.
 */
async function ledgerkeyWithoutWorker(run: Run, url: string, versus: RedisSetup | undefined): Promise<void> {
  const { config } = run;
  const on = (group: Group) => config.groups.has(group);
  // `group`: the one that asks for the variant; `create-no-worker` runs whenever this function does.
  const all: Array<{ name: string; label: string; env: Record<string, string>; group?: Group }> = [
    {
      name: 'create-default',
      label: 'create, 50 companies, default start (in turns with the two below)',
      env: {},
      group: 'worker',
    },
    {
      name: 'create-no-worker',
      label: 'create, 50 companies, RUN_WORKER=false',
      env: { RUN_WORKER: 'false' },
    },
    {
      name: 'create-no-idempotency',
      label: 'create, 50 companies, RUN_WORKER=false, BENCHMARK_DISABLE_IDEMPOTENCY=true',
      // The switch turns the contract off, so the API refuses it unless NODE_ENV=test (which
      // changes nothing else the API does).
      env: { RUN_WORKER: 'false', BENCHMARK_DISABLE_IDEMPOTENCY: 'true', NODE_ENV: 'test' },
      group: 'idempotency',
    },
  ];
  const variants = all.filter((variant) => variant.group === undefined || on(variant.group));
  const apis: Server[] = [];
  try {
    for (const variant of variants) apis.push(await startApi(url, variant.env, run.dir, config));
    const { many } = await companies(run, apis[0]);
    for (const api of apis) await warmUp(api.baseUrl, many);
    await drainJobs(url);
    const loads = variants.map((variant, index) =>
      createCase(variant.name, variant.label, apis[index].baseUrl, url, many),
    );
    if (versus && on('idempotency')) loads.push(redisCases(versus).again);
    run.results.push(...(await inTurns(run, loads[0], ...loads.slice(1))));
  } finally {
    for (const api of apis) await stop(api);
  }
  const { many } = run.companies as NonNullable<Run['companies']>;

  if (on('scale')) {
    const two = [
      await startApi(url, { RUN_WORKER: 'false' }, run.dir, config),
      await startApi(url, { RUN_WORKER: 'false' }, run.dir, config),
    ];
    try {
      for (const api2 of two) await warmUp(api2.baseUrl, many);
      run.results.push(
        await createLoad(
          'two-processes',
          'create, 50 companies, two API processes (connections split between them), RUN_WORKER=false',
          two.map((s) => s.baseUrl),
          config,
          createsOver('two', many),
        ),
      );
    } finally {
      for (const api2 of two) await stop(api2);
    }
  }
}

/** The companies every ledgerkey case uses, created once through the admin API. */
async function companies(run: Run, api: Server): Promise<NonNullable<Run['companies']>> {
  if (!run.companies) {
    run.companies = {
      many: await Promise.all(Array.from({ length: 50 }, (_, i) => newCompany(api.baseUrl, i))),
      single: await newCompany(api.baseUrl, 900),
      replay: await newCompany(api.baseUrl, 901),
    };
  }
  return run.companies;
}

async function replayAnswer(
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
async function drainJobs(url: string): Promise<{ jobs: number; seconds: number }> {
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

// ---------------------------------------------------------------------------------------------
// The database's limit: pgbench and a Node client running the service's own statements

async function databaseLimit(run: Run, url: string): Promise<void> {
  const { config } = run;
  const { many, single } = await companiesWithoutLoad(run, url);
  const capture = await captureCreateStatements(url, run.dir, {
    poolSize: config.poolSize,
    captureModule: join(BENCH_DIST, 'capture-sql.js'),
  });
  run.statements = describeStatements(capture);
  console.log(`one create = ${capture.statements.length} statements:\n  ${run.statements.join('\n  ')}`);

  if (config.groups.has('pgbench')) {
    const version = await pgbenchVersion();
    if (version === null) {
      for (const name of ['pgbench-create', 'pgbench-single', ...Object.keys(FLOOR_SCRIPTS)])
        run.results.push(skipped(name, 'pgbench limit', `${PGBENCH} not found (install postgresql-client)`));
    } else {
      const dir = join(run.dir, 'pgbench');
      const options = {
        clients: config.pgbenchClients,
        seconds: config.seconds,
        protocol: config.pgbenchProtocol,
        dir,
      };
      const manyFiles = await prepareScripts(
        dir,
        'many',
        many.map((c) => pgbenchScript(capture, c.companyId)),
        url,
        config.pgbenchProtocol,
      );
      writeFileSync(
        join(config.outDir, 'pgbench-create.sql'),
        pgbenchScript(capture, '00000000-0000-4000-8000-000000000000'),
      );
      run.results.push(
        await pgbenchLoad(
          'pgbench-create',
          'pgbench limit: the service statements, 50 companies',
          url,
          manyFiles,
          options,
        ),
      );
      const singleFiles = await prepareScripts(
        dir,
        'single',
        [pgbenchScript(capture, single.companyId)],
        url,
        config.pgbenchProtocol,
      );
      run.results.push(
        await pgbenchLoad(
          'pgbench-single',
          'pgbench limit: the service statements, one series',
          url,
          singleFiles,
          options,
        ),
      );
      run.results.push(...(await pgbenchFloors(url, options)));
    }
  }
  if (config.groups.has('node')) {
    run.results.push(await nodeClientBaseline(url, capture, many, config));
  }
}

/** pgbench's floors, by case name: label and script (`pgbenchFloors`). */
const FLOOR_SCRIPTS: Record<string, [label: string, script: string]> = {
  'pgbench-round-trip': ['one round trip: SELECT 1', 'SELECT 1;\n'],
  'pgbench-write': [
    'one durable write: BEGIN, one INSERT, COMMIT',
    `BEGIN;\nINSERT INTO bench_floor (note) VALUES ('floor');\nCOMMIT;\n`,
  ],
};

/**
 * The scale a create's CPU is made of, with pgbench and the same clients: one round trip that does
 * nothing (`SELECT 1`), and the smallest durable write (one row inserted and committed, the commit
 * flushed like a create's). Reported, not goals: they say what a round trip and a commit cost
 * against a whole create (see docs/performance.md).
 */
async function pgbenchFloors(url: string, options: Parameters<typeof pgbenchLoad>[4]): Promise<Figures[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, note text NOT NULL)`,
    );
  } finally {
    await client.end();
  }
  const figures: Figures[] = [];
  for (const [name, [label, script]] of Object.entries(FLOOR_SCRIPTS)) {
    const files = await prepareScripts(options.dir, name, [script], url, options.protocol);
    figures.push(await pgbenchLoad(name, label, url, files, options));
  }
  return figures;
}

/** Companies for cases that start no API process of their own. */
async function companiesWithoutLoad(run: Run, url: string): Promise<NonNullable<Run['companies']>> {
  if (run.companies) return run.companies;
  const api = await startApi(url, { RUN_WORKER: 'false' }, run.dir, run.config);
  try {
    return await companies(run, api);
  } finally {
    await stop(api);
  }
}

/**
 * The same statements through `pg` from Node, with the API's pool size and the bench's
 * concurrency: what the database allows with a Node client but no framework.
 */
async function nodeClientBaseline(
  url: string,
  capture: CreateStatements,
  many: Company[],
  config: BenchConfig,
): Promise<Figures> {
  const pool = new Pool({ connectionString: url, max: config.poolSize });
  // An idle client may still be closing when the bench drops the database: not an error here.
  pool.on('error', () => undefined);
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const deadline = Date.now() + config.seconds * 1000;
  const worker = async (): Promise<void> => {
    while (Date.now() < deadline) {
      n += 1;
      const t0 = performance.now();
      try {
        await runCreateThroughPg(pool, capture, many[n % many.length].companyId);
        latencies.push(performance.now() - t0);
      } catch {
        errors += 1;
      }
    }
  };
  const began = Date.now();
  const cpuBefore = cpuTimes();
  await Promise.all(Array.from({ length: config.connections }, worker));
  const cpuAfter = cpuTimes();
  const seconds = (Date.now() - began) / 1000;
  await pool.end();
  const figures = figuresFromLatencies(
    'node-create',
    `Node client (pg, pool ${config.poolSize}): the service statements, 50 companies`,
    latencies,
    seconds,
    errors,
  );
  // The Node client is this process: its CPU is the `client` group.
  figures.cpuMsPerRequest = cpuPerRequest(cpuBefore, cpuAfter, figures.completed);
  console.log(
    `(node-create) ${figures.requestsPerSecond} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms; ` +
      `CPU ms per create: ${describeCpu(figures.cpuMsPerRequest)}`,
  );
  return figures;
}

// ---------------------------------------------------------------------------------------------
// The Redis-plugin setup

const REDIS_LABELS = {
  'redis-create': 'Redis setup: create, 50 companies',
  'redis-single': 'Redis setup: create, one company (one number series)',
  'redis-replay': 'Redis setup: replay of a finished key',
  'redis-create-again':
    'Redis setup: create, 50 companies, again (in turns with create-no-worker and create-no-idempotency)',
};

/** The Redis-plugin setup, up, checked and warmed up, with its companies. */
interface RedisSetup {
  baseUrl: string;
  url: string;
  many: Company[];
  single: Company;
  replay: Company;
  stop(): Promise<void>;
}

/** The Redis-plugin setup, up and checked; undefined (its cases recorded as skipped) without Redis. */
async function startRedisSetup(run: Run): Promise<RedisSetup | undefined> {
  const { config } = run;
  const redis = await redisVersion(config.redisUrl);
  if ('unavailable' in redis) {
    const reason = `no Redis at ${config.redisUrl} (${redis.unavailable}); start one or set REDIS_URL`;
    console.log(`SKIPPED the Redis setup: ${reason}`);
    for (const [name, label] of Object.entries(REDIS_LABELS)) run.results.push(skipped(name, label, reason));
    return undefined;
  }
  const url = await emptyDatabase(run, 'redis');
  const schema = new Client({ connectionString: url });
  await schema.connect();
  await schema.query(BASELINE_SCHEMA);
  await schema.end();
  const prefix = `ledgerkey-bench-${randomUUID().slice(0, 8)}`;
  const baseline = await startServer(
    'redis-baseline',
    [...config.nodeArgs, join(BENCH_DIST, 'redis-baseline/main.js')],
    {
      DATABASE_URL: url,
      DATABASE_POOL_SIZE: String(config.poolSize),
      ADMIN_API_TOKEN: ADMIN_TOKEN,
      REDIS_URL: config.redisUrl,
      REDIS_KEY_PREFIX: prefix,
    },
    run.dir,
  );
  const stopBaseline = async () => {
    await stop(baseline);
    const deleted = await deleteKeys(config.redisUrl, prefix).catch(() => 0);
    console.log(`  removed ${deleted} bench keys from Redis`);
  };
  try {
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => newCompany(baseline.baseUrl, i)));
    const single = await newCompany(baseline.baseUrl, 900);
    const replay = await newCompany(baseline.baseUrl, 901);
    await checkRedisReplays(baseline.baseUrl, url, config.redisUrl, prefix, many[0]);
    await warmUp(baseline.baseUrl, many);
    return { baseUrl: baseline.baseUrl, url, many, single, replay, stop: stopBaseline };
  } catch (error) {
    await stopBaseline();
    throw error;
  }
}

/** The Redis setup's create cases, as ours (`again`: the create in turns with ours without the layer). */
function redisCases(setup: RedisSetup): { create: TurnLoad; single: TurnLoad; again: TurnLoad } {
  const { baseUrl, url, many } = setup;
  return {
    create: createCase('redis-create', REDIS_LABELS['redis-create'], baseUrl, url, many),
    single: createCase('redis-single', REDIS_LABELS['redis-single'], baseUrl, url, [setup.single]),
    again: createCase('redis-create-again', REDIS_LABELS['redis-create-again'], baseUrl, url, many),
  };
}

/** The Redis setup's replay case, over 400 keys it finished first. */
async function redisReplayCase(setup: RedisSetup): Promise<TurnLoad> {
  const keys = await replayKeys(setup.baseUrl, setup.replay);
  return {
    name: 'redis-replay',
    label: REDIS_LABELS['redis-replay'],
    urls: setup.baseUrl,
    next: replaysOf(keys),
  };
}

/** `BENCH_ONLY` without `ours`: the Redis cases one after the other. */
async function redisSetupAlone(run: Run, setup: RedisSetup): Promise<void> {
  const { create, single } = redisCases(setup);
  run.results.push(...(await inTurns(run, create)), ...(await inTurns(run, single)));
  run.results.push(...(await inTurns(run, await redisReplayCase(setup))));
}

/**
 * Before measuring: the baseline really is idempotent through Redis. A second request with the
 * same key answers the stored invoice (`Idempotent-Replayed: true`, same id), the key is in
 * Redis, and PostgreSQL holds one invoice, not two.
 */
async function checkRedisReplays(
  baseUrl: string,
  url: string,
  redisUrl: string,
  prefix: string,
  company: Company,
): Promise<void> {
  const key = `check-${randomUUID()}`;
  const first = await postCreate(baseUrl, company, key, invoiceBody(1));
  const firstBody = (await first.json()) as { id: string };
  const second = await postCreate(baseUrl, company, key, invoiceBody(1));
  const secondBody = (await second.json()) as { id: string };
  const stored = await redisCommand(redisUrl, ['EXISTS', `${prefix}:POST:/v1/sales/invoices/create:${key}`]);
  const invoices = await invoicesOf({ url, companies: [company] });
  const problems = [
    first.status !== 201 && `first create answered ${first.status}`,
    second.status !== 201 && `replay answered ${second.status}`,
    second.headers.get('idempotent-replayed') !== 'true' && 'replay lacks Idempotent-Replayed: true',
    secondBody.id !== firstBody.id && 'replay answered another invoice',
    stored !== 1 && 'the key is not in Redis',
    invoices !== 1 && `${invoices} invoices in PostgreSQL after a create and its replay`,
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`the Redis baseline is not idempotent: ${problems.join('; ')}`);
  console.log('  Redis baseline check: the replay came from Redis, one invoice in PostgreSQL');
}

// ---------------------------------------------------------------------------------------------
// The bare node:http ceiling

async function bareHttp(run: Run, url: string): Promise<void> {
  const { config } = run;
  if (!run.replayAnswer) {
    const { replay } = await companiesWithoutLoad(run, url);
    const api = await startApi(url, { RUN_WORKER: 'false' }, run.dir, config);
    try {
      const [key] = await replayKeys(api.baseUrl, replay, 1);
      run.replayAnswer = await replayAnswer(api.baseUrl, replay, key.key, key.body);
    } finally {
      await stop(api);
    }
  }
  const file = join(run.dir, 'replay-answer.json');
  writeFileSync(file, JSON.stringify(run.replayAnswer));
  const bare = await startServer(
    'bare-http',
    [join(BENCH_DIST, 'bare-http-server.js')],
    { BARE_RESPONSE_FILE: file },
    run.dir,
  );
  try {
    const fake: Company = { companyId: randomUUID(), apiKey: 'unused' };
    run.results.push(
      await createLoad(
        'bare-http',
        'bare node:http server answering a stored replay',
        bare.baseUrl,
        config,
        createsOver('bare', [fake]),
      ),
    );
  } finally {
    await stop(bare);
  }
}

// ---------------------------------------------------------------------------------------------
// Many stored keys

async function manyKeys(run: Run): Promise<void> {
  const { config } = run;
  const url = await migratedDatabase(run, 'keys');
  const controlUrl = await migratedDatabase(run, 'keysctl');
  const label = config.storedKeys.toLocaleString('en-US');
  // Without the replay cache, like `replay-uncached`: the goal is about the stored keys' index.
  // Two processes, each on a database of its own with the same companies and replay keys: the
  // keys are stored in one, and the two are then measured in turns (A B, B A …), so that what the
  // machine does after writing gigabytes — writeback, its memory daemons — weighs on both alike.
  // The first is also measured before the keys are stored (`keys-replay-before`), for the record.
  const uncached = await startApi(url, REPLAY_CACHE_OFF, run.dir, config);
  const control = await startApi(controlUrl, REPLAY_CACHE_OFF, run.dir, config);
  let many: Company[];
  try {
    const prepare = async (api: Server) => {
      const companiesOf = await Promise.all(Array.from({ length: 50 }, (_, i) => newCompany(api.baseUrl, i)));
      const replay = await newCompany(api.baseUrl, 901);
      await warmUp(api.baseUrl, companiesOf);
      return { many: companiesOf, replay, keys: await replayKeys(api.baseUrl, replay) };
    };
    const big = await prepare(uncached);
    const small = await prepare(control);
    many = big.many;
    // The same warm-up as `replay-uncached`: one pass over the keys.
    await warmUpReplays(uncached.baseUrl, big.keys);
    await drainJobs(url);
    run.results.push(
      await createLoad(
        'keys-replay-before',
        'replay before the keys are stored, IDEMPOTENCY_REPLAY_CACHE_SIZE=0',
        uncached.baseUrl,
        config,
        replaysOf(big.keys),
      ),
    );
    // The control's process gets the same load before the seeding (its JIT as warm as the other's).
    await warmUpReplays(control.baseUrl, small.keys);
    await createLoad(
      'keys-replay-control-warm-up',
      'the control process under the same load before the seeding (not a case)',
      control.baseUrl,
      config,
      replaysOf(small.keys),
    );
    const seed = await seedKeys(
      url,
      [...big.many, big.replay].map((c) => c.companyId),
      config.storedKeys,
    );
    // The control's table gets what the seeding gives the other one (VACUUM, ANALYZE): the same
    // statistics-based plans on both sides.
    await vacuumRecords(controlUrl);
    await warmUpReplays(uncached.baseUrl, big.keys);
    await warmUpReplays(control.baseUrl, small.keys);
    await drainJobs(url);
    await drainJobs(controlUrl);
    const [controlFigures, replayFigures] = await interleavedLoads(
      [
        {
          name: 'keys-replay-control',
          label: `replay on a database without the stored keys, in turns with keys-replay (${TURNS} rounds), IDEMPOTENCY_REPLAY_CACHE_SIZE=0`,
          urls: control.baseUrl,
          next: replaysOf(small.keys),
        },
        {
          name: 'keys-replay',
          label: `replay, ${label} keys stored, in turns with keys-replay-control, IDEMPOTENCY_REPLAY_CACHE_SIZE=0`,
          urls: uncached.baseUrl,
          next: replaysOf(big.keys),
        },
      ],
      config,
      TURNS,
    );
    replayFigures.extra = seed;
    run.results.push(controlFigures, replayFigures);
  } finally {
    await stop(uncached);
    await stop(control);
  }
  // keys-create on a default start, like `create`.
  const api = await startApi(url, {}, run.dir, config);
  try {
    await warmUp(api.baseUrl, many);
    await drainJobs(url);
    run.results.push(
      await createLoad(
        'keys-create',
        `create, 50 companies, ${label} keys stored`,
        api.baseUrl,
        config,
        createsOver('keys', many),
      ),
    );
  } finally {
    await stop(api);
  }
}

async function vacuumRecords(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('VACUUM (ANALYZE) idempotency_records');
  } finally {
    await client.end();
  }
}

/**
 * Loads `count` finished keys (expiring in a day) spread over the companies: random UUIDs, as
 * clients send them, so the primary key is as random inserts leave it. One INSERT … SELECT
 * generate_series per core, in parallel. Foreign-key triggers are skipped for the load where
 * the role may (session_replication_role; every company id is real). Then VACUUM (ANALYZE) and a
 * CHECKPOINT, so that neither runs during the measurement.
 */
async function seedKeys(
  url: string,
  companyIds: string[],
  count: number,
): Promise<Record<string, number | string>> {
  const t0 = Date.now();
  const parts = Math.max(1, Math.min(cpus().length, 4));
  const triggers = await Promise.all(
    Array.from({ length: parts }, async (_, part) => {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        let fkTriggers = 'on';
        try {
          await client.query(`SET session_replication_role = replica`);
          fkTriggers = 'skipped';
        } catch {
          // not a superuser: load with the foreign-key checks
        }
        await client.query(
          `INSERT INTO idempotency_records (company_id, operation, idempotency_key, fingerprint, response_status,
                                            response_headers, response_body, expires_at)
           SELECT ($1::uuid[])[1 + g % cardinality($1::uuid[])], 'sales.invoices.create',
                  md5('seeded ' || g)::uuid::text, sha256(g::text::bytea), 201, '{}', '{"seeded":true}',
                  now() + interval '1 day'
             FROM generate_series($2::bigint, $3::bigint) AS g`,
          [companyIds, Math.floor((count * part) / parts) + 1, Math.floor((count * (part + 1)) / parts)],
        );
        return fkTriggers;
      } finally {
        await client.end();
      }
    }),
  );
  const inserted = Math.round((Date.now() - t0) / 100) / 10;
  // VACUUM as well: an insert-only table of this size otherwise gets its first autovacuum (and
  // every tuple its hint bits) during the measurement.
  await vacuumRecords(url);
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query('CHECKPOINT').catch(() => undefined);
  const total = Math.round((Date.now() - t0) / 100) / 10;
  const { rows } = await client.query<{ size: string }>(
    `SELECT pg_size_pretty(pg_total_relation_size('idempotency_records')) AS size`,
  );
  await client.end();
  console.log(
    `seeded ${count} keys in ${inserted} s (${parts} in parallel; with VACUUM, ANALYZE and CHECKPOINT ${total} s), table ${rows[0].size}`,
  );
  return {
    storedKeys: count,
    seedSeconds: inserted,
    seedTotalSeconds: total,
    seedParallel: parts,
    tableSize: rows[0].size,
    foreignKeyTriggers: triggers[0],
  };
}

// ---------------------------------------------------------------------------------------------
// Databases and the machine

async function emptyDatabase(run: Run, suffix: string): Promise<string> {
  const name = `ledgerkey_bench_${Date.now()}_${suffix}`;
  await run.admin.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
  run.databases.push(name);
  return Object.assign(new URL(run.serverUrl), { pathname: `/${name}` }).toString();
}

async function migratedDatabase(run: Run, suffix: string): Promise<string> {
  const url = await emptyDatabase(run, suffix);
  const dataSource = await createDataSource({
    url,
    poolSize: 2,
    applicationName: 'ledgerkey-bench',
    migrations: MIGRATIONS,
  }).initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();
  await installJobQueue(url);
  return url;
}

async function machineInfo(run: Run): Promise<Record<string, unknown>> {
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

function skipped(name: string, label: string, reason: string): Figures {
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

main().catch((error: unknown) => {
  killAll();
  console.error(error);
  process.exit(1);
});
