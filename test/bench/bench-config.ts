import { resolve } from 'node:path';
import { defaultPoolSize } from '../../libs/database/src/database-options';

/** Compiled to dist/bench/test/bench/: the repository is four levels up. */
export const ROOT = resolve(__dirname, '../../../..');

/** The case groups `BENCH_ONLY` can select (comma-separated); all by default. */
export const GROUPS = [
  'ours',
  'worker',
  'idempotency',
  'scale',
  'pgbench',
  'node',
  'redis',
  'http',
  'keys',
] as const;
export type Group = (typeof GROUPS)[number];

export interface BenchConfig {
  /** Seconds per measured case (BENCH_SECONDS, or the older BENCH_DURATION_S). */
  seconds: number;
  /** autocannon connections, the Node baseline's concurrency and pgbench's clients. */
  connections: number;
  /** Keys stored before the "many keys" cases (BENCH_KEYS). */
  storedKeys: number;
  /** Seconds of quiet after the create load before the RSS is read again (BENCH_SETTLE_SECONDS). */
  settleSeconds: number;
  /** Where results.json and chart.svg go (BENCH_OUT, relative to the repository). */
  outDir: string;
  /** DATABASE_URL: the server to create the bench databases on; else an embedded one. */
  serverUrl: string | undefined;
  redisUrl: string;
  /** LOG_LEVEL of the API processes under load (BENCH_LOG_LEVEL). */
  logLevel: string;
  /** pgbench's clients (BENCH_PGBENCH_CLIENTS); the HTTP cases' connection count by default. */
  pgbenchClients: number;
  /** `-M` of pgbench (BENCH_PGBENCH_PROTOCOL): simple sends literal SQL, one message per statement. */
  pgbenchProtocol: 'simple' | 'extended' | 'prepared';
  /**
   * BENCH_POOL_SIZE: the pool of every API process and of the Redis setup alike (default: the
   * API's own default, `defaultPoolSize()`).
   */
  poolSize: number;
  /**
   * Node arguments of every API process and of the Redis baseline: `--cpu-prof` into
   * BENCH_CPU_PROF_DIR when set (one `.cpuprofile` per process, written when the bench stops it).
   */
  nodeArgs: string[];
  /** BENCH_KEEP_LOGS=true: the processes' logs stay in the run's directory (printed first) after the run. */
  keepLogs: boolean;
  groups: ReadonlySet<Group>;
}

/** A positive integer from the environment variable `name`, or `fallback` when it is unset or empty. */
export function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive integer (got "${raw}")`);
  return value;
}

export function loadBenchConfig(): BenchConfig {
  const only = process.env.BENCH_ONLY;
  const groups = new Set<Group>(
    only
      ? only
          .split(',')
          .map((g) => g.trim())
          .filter((g): g is Group => (GROUPS as readonly string[]).includes(g))
      : GROUPS,
  );
  if (only && groups.size === 0) throw new Error(`BENCH_ONLY must name some of: ${GROUPS.join(', ')}`);
  const protocol = process.env.BENCH_PGBENCH_PROTOCOL ?? 'simple';
  if (!['simple', 'extended', 'prepared'].includes(protocol)) {
    throw new Error('BENCH_PGBENCH_PROTOCOL must be simple, extended or prepared');
  }
  return {
    seconds: positive('BENCH_SECONDS', positive('BENCH_DURATION_S', 15)),
    connections: positive('BENCH_CONNECTIONS', 16),
    storedKeys: positive('BENCH_KEYS', 10_000_000),
    settleSeconds: positive('BENCH_SETTLE_SECONDS', 10),
    outDir: resolve(ROOT, process.env.BENCH_OUT ?? 'docs/performance'),
    serverUrl: process.env.DATABASE_URL || undefined,
    redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    logLevel: process.env.BENCH_LOG_LEVEL ?? 'error',
    nodeArgs: process.env.BENCH_CPU_PROF_DIR
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`]
      : [],
    pgbenchClients: positive('BENCH_PGBENCH_CLIENTS', positive('BENCH_CONNECTIONS', 16)),
    pgbenchProtocol: protocol as BenchConfig['pgbenchProtocol'],
    poolSize: positive('BENCH_POOL_SIZE', defaultPoolSize()),
    keepLogs: process.env.BENCH_KEEP_LOGS === 'true',
    groups,
  };
}
