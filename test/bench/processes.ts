import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEmbeddedPostgres } from '../../libs/database/src/embedded-postgres';
import { apiStartCommand } from '../support/start-command';
import { ROOT } from './bench-config';
import { ADMIN_TOKEN } from './load';

export interface Server {
  child: ChildProcess;
  baseUrl: string;
  log: string;
}

const running = new Set<ChildProcess>();

/** Kills whatever the bench started and is still running (on the way out, also on errors). */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/**
 * Starts a server process with its output in a file (so the bench spends nothing reading its
 * logs and it never blocks on a full pipe) and waits for its `listening on http://…` line.
 * `cwd`: the folder it runs in, this checkout by default.
 */
export async function startServer(
  label: string,
  args: string[],
  env: Record<string, string>,
  logDir: string,
  cwd: string = ROOT,
): Promise<Server> {
  const port = await freePort();
  const log = join(logDir, `${label}-${port}.log`);
  const fd = openSync(log, 'w');
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  running.add(child);
  child.once('exit', () => running.delete(child));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const match = /listening on (http:\/\/\S+)/.exec(readFileSync(log, 'utf8'));
    if (match) return { child, baseUrl: match[1], log };
    if (child.exitCode !== null || child.signalCode !== null) break;
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`${label} did not start:\n${readFileSync(log, 'utf8').slice(-2000)}`);
}

/** The API as production runs it (`npm start`: node, its flags, the built entry), with bench settings. */
export function startApi(
  url: string,
  env: Record<string, string>,
  logDir: string,
  options: {
    poolSize: number;
    logLevel: string;
    nodeArgs?: string[];
    /** Instead of the start script's node flags (the entry stays): a variant of an A/B run. */
    nodeFlags?: string[];
    /** Another checkout to start, as its own `npm start` would (its build; default: this one). */
    root?: string;
  },
): Promise<Server> {
  const root = options.root ?? ROOT;
  const start = apiStartCommand(root);
  const args = options.nodeFlags ? [...options.nodeFlags, start.args[start.args.length - 1]] : start.args;
  return startServer(
    'api',
    [...(options.nodeArgs ?? []), ...args],
    {
      ...start.env,
      DATABASE_URL: url,
      ADMIN_API_TOKEN: ADMIN_TOKEN,
      SEED_DEMO_COMPANY: 'false',
      LOG_LEVEL: options.logLevel,
      DATABASE_POOL_SIZE: String(options.poolSize),
      // The benchmark makes no payments: no provider sandbox per API process (zero setup would start one).
      PAYMENT_PROVIDER_URL: 'http://127.0.0.1:9',
      PAYMENT_PROVIDER_API_KEY: 'sk_unused_in_the_benchmark_0',
      // The load is a few companies from one address: the limiter runs (its cost is measured) but never refuses.
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_UNVERIFIED_PER_SECOND: '1000000',
      ...env,
    },
    logDir,
    root,
  );
}

export async function stop(server: Server): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((done) => server.child.once('exit', done));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** Resident set size of a process in MB, from /proc/<pid>/status (VmRSS). */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Math.round(Number(match[1]) / 102.4) / 10;
}

/** Samples a process's RSS every `everyMs` until stopped; returns the samples in MB. */
export function sampleRss(pid: number, everyMs = 250): { stop: () => number[] } {
  const samples: number[] = [];
  const timer = setInterval(() => {
    try {
      samples.push(rssMb(pid));
    } catch {
      // the process is gone: the samples so far are what there is
    }
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return samples;
    },
  };
}

export function freePort(): Promise<number> {
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

/**
 * The PostgreSQL server to create databases on: `serverUrl` (DATABASE_URL) when given, else an
 * embedded one in a fresh folder under the system's temporary directory (`prefix`), which
 * `cleanup` stops and removes.
 */
export async function databaseServer(
  serverUrl: string | undefined,
  prefix: string,
): Promise<{ serverUrl: string; cleanup: () => Promise<void> }> {
  if (serverUrl) return { serverUrl, cleanup: async () => undefined };
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const embedded = await startEmbeddedPostgres({ dataDir, database: 'postgres' });
  return {
    serverUrl: embedded.url,
    cleanup: async () => {
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
