import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { BUILD_LOCK, holdSharedLock, UNUSED_PAYMENT_PROVIDER, type ExitStatus } from './api-process';
import { testDatabaseUrl } from './test-database';
import { TEST_SECRETS_KEY } from './test-secrets';

const ROOT = resolve(__dirname, '../..');
const ENTRY = 'dist/apps/worker/src/main.js';
const STARTED = /ledgerkey worker started/;
const OUTPUT_LINES_KEPT = 200;

/** The built standalone worker (`node dist/apps/worker/src/main.js`) on the test database. */
export interface WorkerProcess {
  readonly pid: number;
  readonly running: boolean;
  readonly exited: Promise<ExitStatus>;
  /** Sends the signal and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<ExitStatus>;
  output(): string;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Starts a worker and resolves once it reports that it runs.
 * `env` adds to or overrides the child's environment (e.g. WEBHOOK_RETRY_SCHEDULE).
 * @throws Error when dist/ is missing, or the process exits or stays silent before starting
 */
export async function startWorkerProcess(
  env: Record<string, string> = {},
  startTimeoutMs = 30_000,
): Promise<WorkerProcess> {
  // Shared build lock while loading: a concurrent `nest build` empties dist/ first.
  const release = await holdSharedLock(BUILD_LOCK);
  try {
    if (!existsSync(join(ROOT, ENTRY))) throw new Error(`${ENTRY} is missing: run npm run build first`);
    return await spawnWorker(env, startTimeoutMs);
  } finally {
    await release();
  }
}

function spawnWorker(env: Record<string, string>, startTimeoutMs: number): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [ENTRY], {
    cwd: ROOT,
    env: {
      DATABASE_URL: env.DATABASE_URL ?? testDatabaseUrl(),
      LOG_LEVEL: 'warn',
      // The key the API processes seal with: the worker opens the secrets to sign.
      SECRETS_KEY: TEST_SECRETS_KEY,
      // The standalone worker requires a provider (it recovers payments); tests that pay pass theirs.
      ...UNUSED_PAYMENT_PROVIDER,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const lines: string[] = [];
  const output = (): string => lines.join('\n');
  const exited = new Promise<ExitStatus>((resolveExit) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolveExit({ code, signal });
    });
  });
  return new Promise<WorkerProcess>((resolveWorker, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the worker did not start within ${startTimeoutMs} ms:\n${output()}`));
    }, startTimeoutMs);
    let started = false;
    const worker: WorkerProcess = {
      pid: child.pid as number,
      get running() {
        return child.exitCode === null && child.signalCode === null;
      },
      exited,
      async kill(signal = 'SIGTERM') {
        if (worker.running) child.kill(signal);
        return exited;
      },
      output,
    };
    const record = (line: string): void => {
      lines.push(line);
      if (lines.length > OUTPUT_LINES_KEPT) lines.shift();
      if (!started && STARTED.test(line)) {
        started = true;
        clearTimeout(timer);
        resolveWorker(worker);
      }
    };
    createInterface({ input: child.stdout }).on('line', record);
    createInterface({ input: child.stderr }).on('line', record);
    void exited.then((status) => {
      clearTimeout(timer);
      if (!started)
        reject(new Error(`the worker exited (${JSON.stringify(status)}) before starting:\n${output()}`));
    });
  });
}

/** SIGKILLs every worker still running; for afterAll. */
export async function stopAllWorkerProcesses(): Promise<void> {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((resolveExit) => {
          child.once('exit', () => resolveExit());
          child.kill('SIGKILL');
        }),
    ),
  );
}
