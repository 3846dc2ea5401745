import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export interface ProviderSandboxOptions {
  /** PROVIDER_SANDBOX_DATA_DIR: its state, lock and generated secrets. Must not be shared by two running sandboxes. */
  dataDir: string;
  /** Default 0: any free port (the answer's `url` names it). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** PROVIDER_SANDBOX_WEBHOOK_URL, e.g. ledgerkey's `…/v1/providers/sandbox/events`; unset: no webhooks sent. */
  webhookUrl?: string;
  /** PAYMENT_PROVIDER_WEBHOOK_SECRET; unset: the sandbox's own, generated into the data dir. */
  webhookSecret?: string;
  /** PROVIDER_SANDBOX_API_KEY; unset: the sandbox's own, generated into the data dir. */
  apiKey?: string;
  /** PROVIDER_SANDBOX_FAULTS, e.g. `error=0.1,lost_response=0.1,duplicate_webhook=0.2`. */
  faults?: string;
  /** PROVIDER_SANDBOX_SEED. */
  seed?: number;
  /** Further variables for the sandbox (e.g. PROVIDER_SANDBOX_TIMEOUT_HOLD_MS, LOG_LEVEL); they win. */
  env?: Record<string, string>;
  /** The built sandbox; default: `dist/apps/provider-sandbox/src/main.js` of this checkout or image. */
  entry?: string;
  /** Default 15 000. */
  startTimeoutMs?: number;
  /** Each line the sandbox prints (stdout and stderr). */
  onOutput?: (line: string) => void;
}

export interface SandboxExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningProviderSandbox {
  /** Its base URL: PAYMENT_PROVIDER_URL for the adapter. */
  readonly url: string;
  readonly apiKey: string;
  /** What it signs webhooks with: the receiver verifies with it. */
  readonly webhookSecret: string;
  readonly dataDir: string;
  readonly pid: number;
  readonly running: boolean;
  readonly exited: Promise<SandboxExit>;
  /** SIGTERM (a clean stop: the lock is released), then waits for the exit. */
  stop(): Promise<SandboxExit>;
  /** Sends `signal` (e.g. SIGKILL) and waits for the exit. */
  kill(signal: NodeJS.Signals): Promise<SandboxExit>;
  /** The last lines it printed, for error messages. */
  output(): string;
}

const LISTENING = /provider sandbox listening on (http:\/\/\S+)/;
const OUTPUT_LINES_KEPT = 200;

/**
 * Starts the provider sandbox as a child process and resolves once it listens.
 *
 * The child lives and dies with its parent: it holds the child's standard input open and the
 * sandbox stops (as on SIGTERM) when that ends, which is also what happens when the parent is
 * SIGKILLed. Its state does not die: every answered change is fsynced under `dataDir`, and the next
 * start on the same `dataDir` (after a stale-lock takeover, or a wait for the previous process
 * to stop) continues with the same charges, idempotency keys, pending webhooks and secrets.
 * @throws Error when the entry is missing, or the sandbox exits or stays silent before listening
 */
export async function startProviderSandbox(options: ProviderSandboxOptions): Promise<RunningProviderSandbox> {
  const entry = options.entry ?? defaultEntry();
  const dataDir = resolve(options.dataDir);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    PROVIDER_SANDBOX_DATA_DIR: dataDir,
    PROVIDER_SANDBOX_HOST: options.host ?? '127.0.0.1',
    PROVIDER_SANDBOX_PORT: String(options.port ?? 0),
    PROVIDER_SANDBOX_EXIT_ON_STDIN_END: 'true',
    ...definedOnly({
      PROVIDER_SANDBOX_WEBHOOK_URL: options.webhookUrl,
      PAYMENT_PROVIDER_WEBHOOK_SECRET: options.webhookSecret,
      PROVIDER_SANDBOX_API_KEY: options.apiKey,
      PROVIDER_SANDBOX_FAULTS: options.faults,
      PROVIDER_SANDBOX_SEED: options.seed === undefined ? undefined : String(options.seed),
    }),
    ...options.env,
  };
  // A process group of its own: a terminal's Ctrl-C (SIGINT to the whole group) reaches only the
  // parent, which stops the sandbox after its own in-flight requests, as on SIGTERM.
  const child = spawn(process.execPath, [entry], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  // Never written to: its end (our exit, however it happens) is the child's signal to stop.
  child.stdin.on('error', () => undefined);
  const lines: string[] = [];
  const output = (): string => lines.join('\n');
  const exited = new Promise<SandboxExit>((resolveExit) => {
    child.once('exit', (code, signal) => resolveExit({ code, signal }));
  });
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const kill = async (signal: NodeJS.Signals): Promise<SandboxExit> => {
    if (running()) child.kill(signal);
    return exited;
  };

  const url = await new Promise<string>((resolveUrl, reject) => {
    const startTimeoutMs = options.startTimeoutMs ?? 15_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the provider sandbox did not start within ${startTimeoutMs} ms:\n${output()}`));
    }, startTimeoutMs);
    let listening = false;
    const record = (line: string): void => {
      lines.push(line);
      if (lines.length > OUTPUT_LINES_KEPT) lines.shift();
      options.onOutput?.(line);
      const match = LISTENING.exec(line);
      if (match && !listening) {
        listening = true;
        clearTimeout(timer);
        resolveUrl(match[1]);
      }
    };
    createInterface({ input: child.stdout }).on('line', record);
    createInterface({ input: child.stderr }).on('line', record);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    void exited.then((status) => {
      clearTimeout(timer);
      if (!listening)
        reject(
          new Error(`the provider sandbox exited (${JSON.stringify(status)}) before listening:\n${output()}`),
        );
    });
  });

  const apiKey = env.PROVIDER_SANDBOX_API_KEY ?? (await readSecret(dataDir, 'api-key'));
  const webhookSecret = env.PAYMENT_PROVIDER_WEBHOOK_SECRET ?? (await readSecret(dataDir, 'webhook-secret'));
  return {
    url,
    apiKey,
    webhookSecret,
    dataDir,
    pid: child.pid as number,
    get running() {
      return running();
    },
    exited,
    stop: () => kill('SIGTERM'),
    kill,
    output,
  };
}

/**
 * `dist/apps/provider-sandbox/src/main.js` of the checkout (or image) this file belongs to: from
 * the built lib (`dist/libs/payments/src/sandbox/`) and from its source (`libs/payments/src/sandbox/`,
 * under Jest) alike.
 * @throws Error when it is not built
 */
function defaultEntry(): string {
  const built = 'apps/provider-sandbox/src/main.js';
  const candidates = [
    resolve(__dirname, '../../../..', built),
    resolve(__dirname, '../../../..', 'dist', built),
  ];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) {
    throw new Error(
      `the provider sandbox is not built (looked for ${candidates.join(', ')}): run npm run build`,
    );
  }
  return found;
}

async function readSecret(dataDir: string, name: string): Promise<string> {
  return (await readFile(join(dataDir, name), 'utf8')).trim();
}

function definedOnly(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Record<
    string,
    string
  >;
}
