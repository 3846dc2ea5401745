import {
  type Env,
  EnvReader,
  parseProcessConfig,
  type ProcessConfig,
  throwOnProblems,
} from '@ledgerkey/process';
import { type FaultMix, FaultMixError, NO_FAULTS, parseFaultMix } from './fault-mix';
import { MAX_SEED } from './seeded-random';

/** The sandbox's configuration, parsed once at boot (docs/configuration.md and docs/provider-sandbox.md list the variables). */
export interface SandboxConfig {
  process: ProcessConfig;
  host: string;
  /** 0: any free port (the "listening" line names it). */
  port: number;
  dataDir: string;
  /** Unset: generated into `<dataDir>/api-key` at the first start and kept. */
  apiKey?: string;
  /** Unset: events are stored and listed, not sent. */
  webhookUrl?: string;
  /** Unset: generated into `<dataDir>/webhook-secret` at the first start and kept. */
  webhookSecret?: string;
  faults: FaultMix;
  /** Unset: a fresh seed, printed at start. */
  seed?: number;
  timeoutHoldMs: number;
  /** 0: no scheduled payouts (only `POST /v1/payouts`). */
  payoutIntervalMs: number;
  payoutFeeBps: number;
  webhookTimeoutMs: number;
  webhookRetryBaseMs: number;
  webhookRetryMaxMs: number;
  /** How long to wait at start for a previous sandbox on the same data dir to exit. */
  lockWaitMs: number;
  /** Stop when standard input ends: set by `startProviderSandbox`, so the child stops with its parent. */
  exitOnStdinEnd: boolean;
}

export const DEFAULT_PORT = 4010;
export const DEFAULT_DATA_DIR = '.data/provider-sandbox';
const API_KEY = /^[\x21-\x7e]{16,255}$/;
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
/** Standard Webhooks: a secret is 24 to 64 random bytes. */
const WEBHOOK_SECRET_BYTES = { min: 24, max: 64 };

/** @throws ConfigError naming every bad variable */
export function loadSandboxConfig(env: Env): SandboxConfig {
  const processConfig = parseProcessConfig(env);
  const reader = new EnvReader(env);
  const apiKey = reader.optional('PROVIDER_SANDBOX_API_KEY');
  if (apiKey !== undefined && !API_KEY.test(apiKey)) {
    reader.problem('PROVIDER_SANDBOX_API_KEY must be 16 to 255 visible ASCII characters');
  }
  const webhookUrl = reader.optional('PROVIDER_SANDBOX_WEBHOOK_URL');
  if (webhookUrl !== undefined && !isHttpUrl(webhookUrl)) {
    reader.problem(`PROVIDER_SANDBOX_WEBHOOK_URL must be an http(s) URL (got "${webhookUrl}")`);
  }
  const webhookSecret = reader.optional('PAYMENT_PROVIDER_WEBHOOK_SECRET');
  if (webhookSecret !== undefined && !isWebhookSecret(webhookSecret)) {
    reader.problem(
      `PAYMENT_PROVIDER_WEBHOOK_SECRET must be whsec_ followed by the base64 of ${WEBHOOK_SECRET_BYTES.min} to ${WEBHOOK_SECRET_BYTES.max} bytes`,
    );
  }
  let faults = NO_FAULTS;
  const faultText = reader.optional('PROVIDER_SANDBOX_FAULTS');
  if (faultText !== undefined) {
    try {
      faults = parseFaultMix(faultText);
    } catch (error) {
      if (!(error instanceof FaultMixError)) throw error;
      reader.problem(`PROVIDER_SANDBOX_FAULTS: ${error.message}`);
    }
  }
  const seedText = reader.optional('PROVIDER_SANDBOX_SEED');
  const webhookRetryBaseMs = reader.integer('PROVIDER_SANDBOX_WEBHOOK_RETRY_BASE_MS', 1000, 10, 3_600_000);
  const webhookRetryMaxMs = reader.integer('PROVIDER_SANDBOX_WEBHOOK_RETRY_MAX_MS', 60_000, 10, 86_400_000);
  if (webhookRetryMaxMs < webhookRetryBaseMs) {
    reader.problem(
      'PROVIDER_SANDBOX_WEBHOOK_RETRY_MAX_MS must not be below PROVIDER_SANDBOX_WEBHOOK_RETRY_BASE_MS',
    );
  }
  const options: SandboxConfig = {
    process: processConfig.options,
    host: reader.optional('PROVIDER_SANDBOX_HOST') ?? '127.0.0.1',
    port: reader.integer('PROVIDER_SANDBOX_PORT', DEFAULT_PORT, 0, 65_535),
    dataDir: reader.optional('PROVIDER_SANDBOX_DATA_DIR') ?? DEFAULT_DATA_DIR,
    apiKey,
    webhookUrl,
    webhookSecret,
    faults,
    seed: seedText === undefined ? undefined : reader.integer('PROVIDER_SANDBOX_SEED', 0, 0, MAX_SEED),
    timeoutHoldMs: reader.integer('PROVIDER_SANDBOX_TIMEOUT_HOLD_MS', 30_000, 0, 600_000),
    payoutIntervalMs: reader.integer('PROVIDER_SANDBOX_PAYOUT_INTERVAL_MS', 0, 0, 86_400_000),
    payoutFeeBps: reader.integer('PROVIDER_SANDBOX_PAYOUT_FEE_BPS', 150, 0, 10_000),
    webhookTimeoutMs: reader.integer('PROVIDER_SANDBOX_WEBHOOK_TIMEOUT_MS', 10_000, 100, 600_000),
    webhookRetryBaseMs,
    webhookRetryMaxMs,
    lockWaitMs: reader.integer('PROVIDER_SANDBOX_LOCK_WAIT_MS', 10_000, 0, 600_000),
    exitOnStdinEnd: reader.boolean('PROVIDER_SANDBOX_EXIT_ON_STDIN_END', false),
  };
  const sandbox = reader.parsed(options);
  throwOnProblems(processConfig, sandbox);
  return sandbox.options;
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `whsec_` + base64 of 24–64 bytes. */
export function isWebhookSecret(text: string): boolean {
  if (!WEBHOOK_SECRET.test(text)) return false;
  const bytes = Buffer.from(text.slice('whsec_'.length), 'base64').length;
  return bytes >= WEBHOOK_SECRET_BYTES.min && bytes <= WEBHOOK_SECRET_BYTES.max;
}
