import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ProviderSandboxOptions,
  type RunningProviderSandbox,
  startProviderSandbox,
} from '@ledgerkey/payments';
import { BUILD_LOCK, holdSharedLock } from './api-process';

/** How long pm_card_timeout (and the timeout fault) holds a request in tests. */
export const TEST_TIMEOUT_HOLD_MS = 2500;

const started = new Set<RunningProviderSandbox>();
const dataDirs = new Set<string>();

/** A fresh data folder for a sandbox, removed by `stopAllSandboxes`. */
export async function sandboxDataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ledgerkey-provider-sandbox-'));
  dataDirs.add(dir);
  return dir;
}

/**
 * Starts the built sandbox (`startProviderSandbox`, as ledgerkey will) on a fresh data folder unless
 * one is given, with short holds and webhook retries, under the shared build lock.
 */
export async function startTestSandbox(
  options: Partial<ProviderSandboxOptions> = {},
): Promise<RunningProviderSandbox> {
  const release = await holdSharedLock(BUILD_LOCK);
  try {
    const sandbox = await startProviderSandbox({
      ...options,
      dataDir: options.dataDir ?? (await sandboxDataDir()),
      env: {
        LOG_LEVEL: 'warn',
        PROVIDER_SANDBOX_TIMEOUT_HOLD_MS: String(TEST_TIMEOUT_HOLD_MS),
        PROVIDER_SANDBOX_WEBHOOK_RETRY_BASE_MS: '50',
        PROVIDER_SANDBOX_WEBHOOK_RETRY_MAX_MS: '400',
        PROVIDER_SANDBOX_WEBHOOK_TIMEOUT_MS: '2000',
        ...options.env,
      },
    });
    started.add(sandbox);
    return sandbox;
  } finally {
    await release();
  }
}

/** SIGKILLs every sandbox still running and removes the data folders; for afterAll. */
export async function stopAllSandboxes(): Promise<void> {
  await Promise.all([...started].map((sandbox) => sandbox.kill('SIGKILL')));
  started.clear();
  await Promise.all([...dataDirs].map((dir) => rm(dir, { recursive: true, force: true })));
  dataDirs.clear();
}

export interface SandboxAnswer {
  status: number;
  // Tests read what they assert on.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Headers;
}

/** The sandbox's HTTP API, raw: what a test sends and gets. */
export class SandboxHttp {
  constructor(private readonly sandbox: Pick<RunningProviderSandbox, 'url' | 'apiKey'>) {}

  async call(
    method: string,
    path: string,
    options: { body?: unknown; idempotencyKey?: string; apiKey?: string; timeoutMs?: number } = {},
  ): Promise<SandboxAnswer> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.apiKey ?? this.sandbox.apiKey}`,
    };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
    const response = await fetch(`${this.sandbox.url}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text === '' ? undefined : JSON.parse(text),
      headers: response.headers,
    };
  }

  createCharge(
    params: SandboxChargeParams,
    idempotencyKey: string = params.reference,
  ): Promise<SandboxAnswer> {
    return this.call('POST', '/v1/charges', { body: params, idempotencyKey });
  }

  /** How many charges were ever made with the reference (dropped ones included). */
  async chargesWithReference(reference: string): Promise<number> {
    const { body } = await this.call('GET', `/_sandbox/counters?reference=${encodeURIComponent(reference)}`);
    return body.byReference.charges as number;
  }
}

export interface SandboxChargeParams {
  reference: string;
  amount: number;
  currency: string;
  paymentMethod: string;
  metadata: Record<string, string>;
}

/** A charge request as ledgerkey sends it: a fresh reference, 12.10 EUR, pm_card_visa. */
export function aSandboxCharge(overrides: Partial<SandboxChargeParams> = {}): SandboxChargeParams {
  const paymentId = randomUUID();
  return {
    reference: `pay_${paymentId}`,
    amount: 1210,
    currency: 'EUR',
    paymentMethod: 'pm_card_visa',
    metadata: { companyId: 'company-1', paymentId },
    ...overrides,
  };
}

/** Polls until `check` returns a value other than undefined. */
export async function eventually<Value>(
  check: () => Promise<Value | undefined>,
  timeoutMs = 10_000,
): Promise<Value> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(50);
  }
}
