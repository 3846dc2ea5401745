import { randomUUID } from 'node:crypto';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { API_ENTRY, apiStartCommand } from './start-command';
import type { TestCompany } from './test-app';
import { UNLIMITED_RATE } from './test-env';
import { testDatabaseUrl } from './test-database';
import { TEST_SECRETS_KEY } from './test-secrets';

export const API_PROCESS_ADMIN_TOKEN = 'test-admin-token-api-process-0123';

/**
 * A provider nobody listens at (the discard port), for processes of tests that never pay. Their
 * workers must not take over other suites' payments on the shared database either: one attempt
 * per payment (the original) leaves nothing to the recovery.
 */
export const UNUSED_PAYMENT_PROVIDER = {
  PAYMENT_PROVIDER_URL: 'http://127.0.0.1:9',
  PAYMENT_PROVIDER_API_KEY: 'sk_unused_in_this_test_0000',
  PAYMENT_RECOVERY_MAX_ATTEMPTS: '1',
  // Nor reconcile other suites' companies against a provider that is not theirs.
  PAYMENT_RECONCILIATION_INTERVAL_MINUTES: '0',
};

const ROOT = resolve(__dirname, '../..');
const LISTENING = /ledgerkey listening on (http:\/\/\S+)/;
/**
 * Builders hold this lock exclusively (`flock /tmp/ledgerkey-build.lock npm run build`), and
 * `nest build` empties dist/ first: a child starting during someone's build would load a
 * half-written dist/. Startup takes it shared; once listening, every module is loaded.
 */
export const BUILD_LOCK = '/tmp/ledgerkey-build.lock';
const OUTPUT_LINES_KEPT = 200;

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ApiProcessOptions {
  /** Overrides or additions to the child's environment. */
  env?: Record<string, string>;
  startTimeoutMs?: number;
}

/** The built API (`npm start`'s command: `node <flags> dist/apps/api/src/main.js`) running as a child process on the test database. */
export interface ApiProcess {
  readonly baseUrl: string;
  readonly pid: number;
  readonly running: boolean;
  /** Resolves when the process has exited, however it ended. */
  readonly exited: Promise<ExitStatus>;
  /** Sends the signal and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<ExitStatus>;
  /** The last lines the process printed (stdout and stderr), for failure messages. */
  output(): string;
  /** Creates a fresh company through this process's admin API. */
  newCompany(): Promise<TestCompany>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Starts the API as production does and resolves once it prints its "listening" line.
 * @throws Error when dist/ is missing, or the process exits or stays silent before listening
 */
export async function startApiProcess(options: ApiProcessOptions = {}): Promise<ApiProcess> {
  const port = await freePort();
  const env: Record<string, string> = {
    // Read only when not given: suites on a database of their own run without the e2e global setup.
    DATABASE_URL: options.env?.DATABASE_URL ?? testDatabaseUrl(),
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_API_TOKEN: API_PROCESS_ADMIN_TOKEN,
    SEED_DEMO_COMPANY: 'false',
    LOG_LEVEL: 'warn',
    // Webhook workers are started explicitly by the tests that need one (worker-process.ts): a
    // worker inside an API process that a crash test SIGKILLs could abandon other tests' deliveries.
    RUN_WORKER: 'false',
    // One key for every process on the database (workers open what APIs sealed).
    SECRETS_KEY: TEST_SECRETS_KEY,
    // Without a URL the API would start a provider sandbox of its own under DATA_DIR (zero setup),
    // one per process on one folder. Tests that pay pass their own sandbox's URL and key.
    ...UNUSED_PAYMENT_PROVIDER,
    // Suites fire bursts at one company from one address: only the rate-limit suites set a limit.
    RATE_LIMIT_PER_SECOND: UNLIMITED_RATE,
    RATE_LIMIT_UNVERIFIED_PER_SECOND: UNLIMITED_RATE,
    ...options.env,
  };
  const release = await holdSharedLock(BUILD_LOCK);
  try {
    if (!existsSync(join(ROOT, API_ENTRY)))
      throw new Error(`${API_ENTRY} is missing: run npm run build first`);
    return await spawnApi(env, options.startTimeoutMs ?? 30_000);
  } finally {
    await release();
  }
}

/** SIGKILLs every child still running; for afterAll, so a failed test leaves no process behind. */
export async function stopAllApiProcesses(): Promise<void> {
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

function spawnApi(env: Record<string, string>, startTimeoutMs: number): Promise<ApiProcess> {
  const start = apiStartCommand(ROOT);
  const child = spawn(process.execPath, start.args, {
    cwd: ROOT,
    env: { ...start.env, ...env },
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
  let baseUrl: string | undefined;
  const listening = new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the API did not start within ${startTimeoutMs} ms:\n${output()}`));
    }, startTimeoutMs);
    const record = (line: string): void => {
      lines.push(line);
      if (lines.length > OUTPUT_LINES_KEPT) lines.shift();
      const match = LISTENING.exec(line);
      if (match && baseUrl === undefined) {
        baseUrl = match[1];
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    };
    // Read both streams to the end: a child blocked on a full pipe would stall its requests.
    createInterface({ input: child.stdout }).on('line', record);
    createInterface({ input: child.stderr }).on('line', record);
    void exited.then((status) => {
      clearTimeout(timer);
      reject(new Error(`the API exited (${JSON.stringify(status)}) before listening:\n${output()}`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });

  return listening.then((url) => {
    const api: ApiProcess = {
      baseUrl: url,
      pid: child.pid as number,
      get running() {
        return child.exitCode === null && child.signalCode === null;
      },
      exited,
      async kill(signal = 'SIGTERM') {
        if (api.running) child.kill(signal);
        return exited;
      },
      output,
      newCompany: () => createCompany(url),
    };
    return api;
  });
}

async function createCompany(baseUrl: string): Promise<TestCompany> {
  const response = await fetch(`${baseUrl}/admin/companies`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${API_PROCESS_ADMIN_TOKEN}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': `test-company-${randomUUID()}`,
    },
    body: JSON.stringify({ name: 'Test Company', countryCode: 'LT', currency: 'EUR' }),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`company creation failed: ${response.status} ${text}`);
  const { companyId, apiKey } = JSON.parse(text) as { companyId: string; apiKey: string };
  return { companyId, apiKey, auth: { Authorization: `Bearer ${apiKey}` } };
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolvePort(port));
    });
  });
}

/**
 * Holds a shared flock(1) on `path` until the returned function is called. Without the
 * flock tool (or when it fails) startup goes ahead unlocked.
 */
export function holdSharedLock(path: string): Promise<() => Promise<void>> {
  return new Promise((resolveLock) => {
    const holder = spawn('flock', ['--shared', path, '--command', 'echo locked && exec cat'], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    holder.stdin.on('error', () => undefined);
    const gone = new Promise<void>((resolveExit) => holder.once('close', () => resolveExit()));
    const release = async (): Promise<void> => {
      holder.stdin.end();
      await gone;
    };
    holder.once('error', () => resolveLock(async () => undefined));
    void gone.then(() => resolveLock(async () => undefined));
    createInterface({ input: holder.stdout }).once('line', () => resolveLock(release));
  });
}
