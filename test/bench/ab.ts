/**
 * `npm run bench:ab`: is one way of starting the API cheaper per create than `npm start`?
 *
 * Two identical processes differ by more than most changes are worth on these 2-core machines:
 * ±10 % in creates per second, and a process's figures drift with the minute. So every variant
 * runs beside the baseline, in turns, and the baseline also runs beside a second copy of itself:
 * that control's ratios are the noise floor next to which a variant's ratios mean something.
 *
 * - AB_VARIANTS: JSON array of `{ "name", "env"?: {…}, "nodeFlags"?: [...] }`; `nodeFlags`
 *   replace the start script's node flags (its environment words stay), `env` is added to the
 *   process's environment. Example: `[{"name":"semi-32","nodeFlags":["--max-semi-space-size=32"]}]`.
 *   A benchmark switch (BENCHMARK_DISABLE_IDEMPOTENCY) needs `"NODE_ENV": "test"` in the same
 *   `env`: the API refuses it otherwise.
 * - AB_ROUNDS (even, default 10), AB_SECONDS per turn (default 6); DATABASE_URL or an embedded
 *   PostgreSQL, as the bench.
 *
 * Each round loads every process once (16 connections, creates over 50 companies, RUN_WORKER=false
 * so the worker's timing stays out); the order reverses every round, because the turn after a
 * switch of process runs differently from the next one. Per turn: creates per second, and the
 * process's own CPU per create (`/proc/<pid>/stat`). A variant's ratio
 * to the baseline is taken per round (the two turns minutes apart at most), then averaged.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { quoteIdentifier } from '../../libs/database/src/embedded-postgres';
import { loadBenchConfig, positive } from './bench-config';
import { processCpuMs } from './cpu-accounting';
import { type Company, createLoad, createsOver, newCompany, warmUp } from './load';
import { databaseServer, killAll, type Server, startApi, stop } from './processes';

interface Variant {
  name: string;
  env?: Record<string, string>;
  nodeFlags?: string[];
}

interface Turn {
  requestsPerSecond: number;
  cpuMsPerCreate: number;
}

function variantsOf(raw: string | undefined): Variant[] {
  const parsed: unknown = JSON.parse(raw ?? '[]');
  const stringsOnly = (value: unknown): boolean =>
    typeof value === 'object' && value !== null && Object.values(value).every((v) => typeof v === 'string');
  if (
    !Array.isArray(parsed) ||
    parsed.some(
      (v: Variant) =>
        typeof v?.name !== 'string' ||
        (v.env !== undefined && !stringsOnly(v.env)) ||
        (v.nodeFlags !== undefined && !(Array.isArray(v.nodeFlags) && stringsOnly(v.nodeFlags))),
    )
  ) {
    throw new Error('AB_VARIANTS must be a JSON array of { "name", "env"?: {…}, "nodeFlags"?: […] }');
  }
  return parsed as Variant[];
}

const mean = (values: number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function main(): Promise<void> {
  const config = loadBenchConfig();
  const rounds = positive('AB_ROUNDS', 10);
  if (rounds % 2 !== 0) throw new Error('AB_ROUNDS must be even: the order reverses every round');
  const seconds = positive('AB_SECONDS', 6);
  const variants: Variant[] = [
    { name: 'baseline' },
    { name: 'baseline, again (control)' },
    ...variantsOf(process.env.AB_VARIANTS),
  ];
  const dir = mkdtempSync(join(tmpdir(), 'ledgerkey-ab-'));
  const { serverUrl, cleanup } = await databaseServer(config.serverUrl, 'ledgerkey-ab-pg-');
  const admin = new Client({ connectionString: serverUrl });
  const database = `ledgerkey_ab_${Date.now()}`;
  const apis: Server[] = [];
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${quoteIdentifier(database)}`);
    const url = Object.assign(new URL(serverUrl), { pathname: `/${database}` }).toString();
    // One at a time: the first migrates the database.
    for (const variant of variants) {
      apis.push(
        await startApi(url, { RUN_WORKER: 'false', ...variant.env }, dir, {
          poolSize: config.poolSize,
          logLevel: config.logLevel,
          nodeFlags: variant.nodeFlags,
        }),
      );
    }
    const companies: Company[] = [];
    for (let i = 0; i < 50; i += 1) companies.push(await newCompany(apis[i % apis.length].baseUrl, i));
    const load = { connections: config.connections, seconds };
    for (const [i, api] of apis.entries()) {
      await warmUp(api.baseUrl, companies);
      await createLoad(
        'warm-up',
        'warm-up',
        api.baseUrl,
        { ...load, seconds: 3 },
        createsOver(`warm${i}`, companies),
      );
    }
    console.log(`ab: ${variants.length} processes, ${rounds} rounds of ${seconds} s turns; logs in ${dir}`);
    const turns: Turn[][] = variants.map(() => []);
    for (let round = 0; round < rounds; round += 1) {
      const order = [...apis.keys()];
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        const pid = apis[i].child.pid as number;
        const before = processCpuMs(pid);
        const figures = await createLoad(
          variants[i].name,
          variants[i].name,
          apis[i].baseUrl,
          load,
          createsOver(`ab${round}v${i}`, companies),
        );
        if (figures.errors > 0) throw new Error(`${variants[i].name}: ${figures.errors} failed creates`);
        turns[i].push({
          requestsPerSecond: figures.requestsPerSecond,
          cpuMsPerCreate: (processCpuMs(pid) - before) / figures.completed,
        });
      }
    }
    printReport(variants, turns);
  } finally {
    for (const api of apis) await stop(api);
    await admin
      .query(`DROP DATABASE IF EXISTS ${quoteIdentifier(database)} WITH (FORCE)`)
      .catch(() => undefined);
    await admin.end().catch(() => undefined);
    await cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

function printReport(variants: Variant[], turns: Turn[][]): void {
  const [baseline] = turns;
  console.log(
    '\n| process | creates/s (mean) | API CPU ms per create (mean) | creates/s ÷ baseline (mean, median) | CPU ÷ baseline (mean, median) |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const [i, variant] of variants.entries()) {
    const rate = turns[i].map((t) => t.requestsPerSecond);
    const cpu = turns[i].map((t) => t.cpuMsPerCreate);
    const rateRatios = turns[i].map((t, round) => t.requestsPerSecond / baseline[round].requestsPerSecond);
    const cpuRatios = turns[i].map((t, round) => t.cpuMsPerCreate / baseline[round].cpuMsPerCreate);
    const ratios =
      i === 0
        ? '— | —'
        : `${mean(rateRatios).toFixed(3)}, ${median(rateRatios).toFixed(3)} | ${mean(cpuRatios).toFixed(3)}, ${median(cpuRatios).toFixed(3)}`;
    console.log(`| ${variant.name} | ${mean(rate).toFixed(0)} | ${mean(cpu).toFixed(3)} | ${ratios} |`);
  }
  console.log(
    "\nThe control ran the same start as the baseline: a variant whose ratios are not further from 1 than the control's has not shown an effect.",
  );
}

main().catch((error: unknown) => {
  killAll();
  console.error(error);
  process.exit(1);
});
