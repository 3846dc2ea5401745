/**
 * `npm run bench:ab`: is one way of starting the API, or one build of it, cheaper per request
 * than another?
 *
 * Two identical processes differ by more than most changes are worth on these 2-core machines:
 * ±10 % in creates per second, and a process's figures drift with the minute. So every variant
 * runs beside the baseline, in turns, and the baseline also runs beside a second copy of itself:
 * that control's ratios are the noise floor (the A/A spread) next to which a variant's ratios
 * mean something.
 *
 * - AB_VARIANTS: JSON array of `{ "name", "env"?: {…}, "nodeFlags"?: [...], "root"?: "/path" }`;
 *   `nodeFlags` replace the start script's node flags (its environment words stay), `env` is added
 *   to the process's environment, `root` names another checkout whose built
 *   `dist/apps/api/src/main.js` runs, started as that checkout's `npm start` (default: the
 *   baseline's checkout). Example: `[{"name":"semi-32","nodeFlags":["--max-semi-space-size=32"]}]`.
 *   A benchmark switch (BENCHMARK_DISABLE_IDEMPOTENCY) needs `"NODE_ENV": "test"` in the same
 *   `env`: the API refuses it otherwise.
 * - AB_BASELINE_ROOT: the checkout the baseline and its control run (default: this one). Before
 *   and after a change: `AB_BASELINE_ROOT=/tmp/before AB_VARIANTS='[{"name":"after","root":"."}]'`.
 *   Each checkout gets its own database on the server (two builds may differ in migrations);
 *   processes of one checkout share one.
 * - AB_LOADS: comma list of `create` (over 50 companies; the default), `single-series` (creates of
 *   one company: every create takes the same counter row) and `replay` (byte-identical replays of
 *   400 keys the loaded process finished itself, answered from its replay cache).
 * - AB_ROUNDS (even, default 10), AB_SECONDS per turn (default 6); DATABASE_URL or an embedded
 *   PostgreSQL, as the bench.
 *
 * Each round runs every load on every process once (16 connections, RUN_WORKER=false so the
 * worker's timing stays out); the order reverses every round, because the turn after a switch of
 * process runs differently from the next one. Per turn: requests per second, and the process's
 * own CPU per request (`/proc/<pid>/stat`). A process's ratio to the baseline is taken per round
 * (the two turns minutes apart at most), then averaged. Per load and variant a verdict: within the
 * control's spread, better or worse (ab-report.ts: the formula).
 */
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { quoteIdentifier } from '../../libs/database/src/embedded-postgres';
import { API_ENTRY } from '../support/start-command';
import { printReport, type Turn } from './ab-report';
import { loadBenchConfig, positive, ROOT } from './bench-config';
import { processCpuMs } from './cpu-accounting';
import type { Company, KeyedRequest } from './load';
import { createLoad, createsOver, newCompany, postCreate, replayKeys, replaysOf, warmUp } from './load';
import { databaseServer, killAll, type Server, startApi, stop } from './processes';

interface Variant {
  name: string;
  env?: Record<string, string>;
  nodeFlags?: string[];
  root?: string;
}

const LOADS = {
  create: 'creates over 50 companies',
  'single-series': 'creates of one company (one number series: the same counter row)',
  replay: 'replays of 400 finished keys, from the replay cache of the process that finished them',
} as const;
type LoadName = keyof typeof LOADS;

/** The companies a checkout's processes are loaded with, in that checkout's database. */
interface Companies {
  many: Company[];
  single: Company;
  replay: Company;
}

/** A started process: what it runs, where, and the replay keys it finished. */
interface Process {
  variant: Variant & { root: string };
  api: Server;
  companies: Companies;
  replayKeys: KeyedRequest[];
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
        (v.nodeFlags !== undefined && !(Array.isArray(v.nodeFlags) && stringsOnly(v.nodeFlags))) ||
        (v.root !== undefined && typeof v.root !== 'string'),
    )
  ) {
    throw new Error(
      'AB_VARIANTS must be a JSON array of { "name", "env"?: {…}, "nodeFlags"?: […], "root"?: "/path" }',
    );
  }
  return parsed as Variant[];
}

function loadsOf(raw: string | undefined): LoadName[] {
  const names = (raw ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => !Object.hasOwn(LOADS, name));
  if (unknown.length > 0) {
    throw new Error(`AB_LOADS: unknown ${unknown.join(', ')}; known: ${Object.keys(LOADS).join(', ')}`);
  }
  return names.length === 0 ? ['create'] : ([...new Set(names)] as LoadName[]);
}

/** A checkout's real path, once its API is known to be built. */
function checkout(root: string): string {
  const path = realpathSync(resolve(root));
  if (!existsSync(join(path, API_ENTRY))) {
    throw new Error(`${path} has no ${API_ENTRY}: build it first (npm run build there)`);
  }
  return path;
}

async function main(): Promise<void> {
  const config = loadBenchConfig();
  const rounds = positive('AB_ROUNDS', 10);
  if (rounds % 2 !== 0) throw new Error('AB_ROUNDS must be even: the order reverses every round');
  const seconds = positive('AB_SECONDS', 6);
  const loads = loadsOf(process.env.AB_LOADS);
  const baselineRoot = checkout(process.env.AB_BASELINE_ROOT || ROOT);
  const variants = [
    { name: 'baseline' },
    { name: 'baseline, again (control)' },
    ...variantsOf(process.env.AB_VARIANTS),
  ].map((variant) => ({ ...variant, root: checkout(variant.root ?? baselineRoot) }));
  const dir = mkdtempSync(join(tmpdir(), 'ledgerkey-ab-'));
  const { serverUrl, cleanup } = await databaseServer(config.serverUrl, 'ledgerkey-ab-pg-');
  const admin = new Client({ connectionString: serverUrl });
  const stamp = Date.now();
  /** By checkout: two builds may differ in migrations. */
  const databases = new Map<string, { name: string; url: string }>();
  const apis: Server[] = [];
  try {
    await admin.connect();
    // One at a time: the first process of each database migrates it.
    for (const variant of variants) {
      let database = databases.get(variant.root);
      if (database === undefined) {
        const name = `ledgerkey_ab_${stamp}${databases.size === 0 ? '' : `_${databases.size}`}`;
        await admin.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
        database = { name, url: Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString() };
        databases.set(variant.root, database);
      }
      apis.push(
        await startApi(database.url, { RUN_WORKER: 'false', ...variant.env }, dir, {
          poolSize: config.poolSize,
          logLevel: config.logLevel,
          nodeFlags: variant.nodeFlags,
          root: variant.root,
        }),
      );
    }
    const companies = new Map<string, Companies>();
    for (const root of databases.keys()) {
      companies.set(root, await companiesOf(apis.filter((_, i) => variants[i].root === root)));
    }
    const processes: Process[] = variants.map((variant, i) => ({
      variant,
      api: apis[i],
      companies: companies.get(variant.root) as Companies,
      replayKeys: [],
    }));
    const settings = { connections: config.connections, seconds };
    for (const [i, proc] of processes.entries()) {
      await warmUp(proc.api.baseUrl, proc.companies.many);
      // Finished by this process: their answers are in its replay cache (which is per process).
      if (loads.includes('replay'))
        proc.replayKeys = await replayKeys(proc.api.baseUrl, proc.companies.replay);
      for (const load of loads)
        await turn(proc, load, `warm${i}`, { ...settings, seconds: 3 }, `warm-up, ${proc.variant.name}`);
    }
    console.log(
      `ab: ${processes.length} processes, ${databases.size} database(s), loads ${loads.join(', ')}, ` +
        `${rounds} rounds of ${seconds} s turns; logs in ${dir}`,
    );
    const turns: Turn[][][] = loads.map(() => processes.map(() => []));
    const sequence = loads.flatMap((_, l) => processes.map((_p, p) => [l, p] as const));
    for (let round = 0; round < rounds; round += 1) {
      for (const [l, p] of round % 2 === 1 ? [...sequence].reverse() : sequence) {
        turns[l][p].push(await turn(processes[p], loads[l], `ab${round}v${p}`, settings));
      }
    }
    printReport({
      loads: loads.map((name) => ({ name, label: LOADS[name] })),
      processes: processes.map(({ variant }) => variant),
      turns,
    });
  } finally {
    for (const api of apis) await stop(api);
    for (const { name } of databases.values()) {
      await admin
        .query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`)
        .catch(() => undefined);
    }
    await admin.end().catch(() => undefined);
    await cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 50 companies, the single series' and the replays' one, made by a database's processes in turn. */
async function companiesOf(apis: Server[]): Promise<Companies> {
  const many: Company[] = [];
  for (let i = 0; i < 50; i += 1) many.push(await newCompany(apis[i % apis.length].baseUrl, i));
  return {
    many,
    single: await newCompany(apis[0].baseUrl, 900),
    replay: await newCompany(apis[0].baseUrl, 901),
  };
}

/** One turn of `load` on one process: its rate and its own CPU per request. */
async function turn(
  proc: Process,
  load: LoadName,
  tag: string,
  settings: { connections: number; seconds: number },
  /** What the turn's printed line starts with: the process's name, or that of the warm-up. */
  name = proc.variant.name,
): Promise<Turn> {
  if (load === 'replay') await refreshReplays(proc);
  const next =
    load === 'replay'
      ? replaysOf(proc.replayKeys)
      : createsOver(`${tag}${load}`, load === 'create' ? proc.companies.many : [proc.companies.single]);
  const pid = proc.api.child.pid as number;
  const before = processCpuMs(pid);
  const figures = await createLoad(name, load, proc.api.baseUrl, settings, next);
  if (figures.errors > 0)
    throw new Error(`${proc.variant.name}: ${figures.errors} failed requests (${load})`);
  return {
    requestsPerSecond: figures.requestsPerSecond,
    cpuMsPerRequest: (processCpuMs(pid) - before) / figures.completed,
  };
}

/**
 * Puts a process's replay keys back in its replay cache before its replay turn: the creates of
 * the other turns push them out (least recently used first out), and a replay read from
 * PostgreSQL is kept again. 16 at a time; each must answer as a replay.
 */
async function refreshReplays({ api, replayKeys: keys }: Process): Promise<void> {
  for (let start = 0; start < keys.length; start += 16) {
    const replayed = await Promise.all(
      keys.slice(start, start + 16).map(async ({ apiKey, key, body }) => {
        const response = await postCreate(api.baseUrl, { companyId: '', apiKey }, key, body);
        await response.arrayBuffer();
        return response.headers.get('idempotent-replayed') === 'true';
      }),
    );
    if (replayed.includes(false)) throw new Error(`replay refresh: a key of ${api.baseUrl} did not replay`);
  }
}

main().catch((error: unknown) => {
  killAll();
  console.error(error);
  process.exit(1);
});
