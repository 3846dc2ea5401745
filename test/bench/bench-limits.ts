import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Pool } from 'pg';
import type { BenchConfig } from './bench-config';
import {
  type Company,
  type Figures,
  createLoad,
  createsOver,
  figuresFromLatencies,
  replayKeys,
} from './load';
import { PGBENCH, pgbenchLoad, pgbenchVersion, prepareScripts } from './pgbench-limit';
import { cpuPerRequest, cpuTimes, describeCpu } from './cpu-accounting';
import { startApi, startServer, stop } from './processes';
import {
  type CreateStatements,
  captureCreateStatements,
  describeStatements,
  pgbenchScript,
  runCreateThroughPg,
} from './service-statements';
import { BENCH_DIST, companiesWithoutLoad, replayAnswer, type Run, skipped } from './bench-run';

/**
 * The ceilings: the database's limit (pgbench and a Node client running the service's own
 * statements) and a bare node:http server answering ledgerkey's replay.
 */

export async function databaseLimit(run: Run, url: string): Promise<void> {
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
export const FLOOR_SCRIPTS: Record<string, [label: string, script: string]> = {
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
export async function pgbenchFloors(
  url: string,
  options: Parameters<typeof pgbenchLoad>[4],
): Promise<Figures[]> {
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

/**
 * The same statements through `pg` from Node, with the API's pool size and the bench's
 * concurrency: what the database allows with a Node client but no framework.
 */
export async function nodeClientBaseline(
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

export async function bareHttp(run: Run, url: string): Promise<void> {
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
