/**
 * `npm run bench`: the measurements behind issue 11. Real API processes on a real PostgreSQL,
 * driven by autocannon; compared with the setup a NestJS team would reach for (Redis plugin),
 * with the database's own limit (pgbench running the service's statements) and with a bare
 * node:http server. Prints every case and every goal with PASS/MISS, and writes results.json and
 * chart.svg (docs/performance/ by default). Not part of `npm test`. docs/performance.md explains
 * each case; BENCH_* variables are listed in bench-config.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { quoteIdentifier } from '../../libs/database/src/embedded-postgres';
import { type Group, loadBenchConfig } from './bench-config';
import { databaseServer, killAll } from './processes';
import { chart, evaluateGoals, printReport } from './report';
import { machineInfo, migratedDatabase, type Run } from './bench-run';
import { ledgerkeyDefaultStart, ledgerkeyWithoutWorker } from './bench-ledgerkey';
import { bareHttp, databaseLimit } from './bench-limits';
import { redisSetupAlone, startRedisSetup } from './bench-redis';
import { manyKeys } from './bench-keys';

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

main().catch((error: unknown) => {
  killAll();
  console.error(error);
  process.exit(1);
});
