import { type Env, EnvReader, type ParsedConfig } from '@ledgerkey/process';

/** Where a test may SIGKILL its own process during a payment (`PAYMENT_TEST_CRASH_POINT`). */
export const PAYMENT_CRASH_POINTS = ['before_provider_call', 'after_provider_answer'] as const;
export type PaymentCrashPoint = (typeof PAYMENT_CRASH_POINTS)[number];

/** How ledgerkey reaches the payment provider. */
export interface PaymentProviderConnection {
  /** PAYMENT_PROVIDER_URL; unset: `npm start` starts the bundled provider sandbox and sets it. */
  url: string | undefined;
  /** PAYMENT_PROVIDER_API_KEY: required with the URL; the sandbox started by `npm start` has its own. */
  apiKey: string | undefined;
  /** PAYMENT_PROVIDER_WEBHOOK_SECRET: verifies the provider's webhooks (the receiver is issue 13's). */
  webhookSecret: string | undefined;
}

/** What `npm start` passes to the bundled provider sandbox (ignored with PAYMENT_PROVIDER_URL). */
export interface BundledSandboxSettings {
  /** PROVIDER_SANDBOX_FAULTS, as the sandbox parses it (a bad value stops its start, named). */
  faults: string | undefined;
  /** PROVIDER_SANDBOX_PAYOUT_INTERVAL_MS: payouts on a schedule; unset: on demand only. */
  payoutIntervalMs: number | undefined;
}

export interface PaymentsConfig {
  provider: PaymentProviderConnection;
  sandbox: BundledSandboxSettings;
  /** PAYMENT_PROVIDER_TIMEOUT_MS: one call to the provider, whole answer included. */
  providerTimeoutMs: number;
  /**
   * PAYMENT_LEASE_SECONDS: how long an attempt holds a payment's key. At least two provider calls
   * (a resume looks the charge up, then may charge) plus a second: a live attempt always settles
   * before its lease can run out.
   */
  leaseSeconds: number;
  /**
   * PAYMENT_RECONCILIATION_INTERVAL_MINUTES: the workers' scheduled reconciliation runs every this
   * many minutes (a divisor of 60); 0: no scheduled runs (POST /v1/reconciliation/runs/create only).
   */
  reconciliationIntervalMinutes: number;
  recovery: {
    /** PAYMENT_RECOVERY_INTERVAL_MS: how often each worker looks for payments to resume. */
    intervalMs: number;
    /** PAYMENT_RECOVERY_MAX_ATTEMPTS: attempts after which the recovery leaves a payment to people. */
    maxAttempts: number;
  };
  /**
   * PAYMENT_TEST_CRASH_POINT (tests only: refused unless NODE_ENV=test): the process SIGKILLs
   * itself there during every payment, so crash tests hit an exact point.
   */
  testCrashPoint: PaymentCrashPoint | undefined;
}

const API_KEY = /^[\x21-\x7E]{16,255}$/;
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

/** The PAYMENT_* variables. */
export function parsePaymentsConfig(env: Env): ParsedConfig<PaymentsConfig> {
  const reader = new EnvReader(env);
  const url = providerUrl(reader);
  const apiKey = reader.optional('PAYMENT_PROVIDER_API_KEY');
  if (apiKey !== undefined && !API_KEY.test(apiKey)) {
    reader.problem('PAYMENT_PROVIDER_API_KEY must be 16–255 visible ASCII characters');
  }
  if (url !== undefined && apiKey === undefined) {
    reader.problem('PAYMENT_PROVIDER_API_KEY must be set with PAYMENT_PROVIDER_URL');
  }
  const webhookSecret = reader.optional('PAYMENT_PROVIDER_WEBHOOK_SECRET');
  if (webhookSecret !== undefined && !WEBHOOK_SECRET.test(webhookSecret)) {
    reader.problem('PAYMENT_PROVIDER_WEBHOOK_SECRET must be whsec_ followed by base64');
  }
  const providerTimeoutMs = reader.integer('PAYMENT_PROVIDER_TIMEOUT_MS', 10_000, 100, 120_000);
  const leaseSeconds = reader.integer('PAYMENT_LEASE_SECONDS', 60, 1, 3600);
  if (leaseSeconds * 1000 < 2 * providerTimeoutMs + 1000) {
    reader.problem(
      'PAYMENT_LEASE_SECONDS must cover two provider calls (2 × PAYMENT_PROVIDER_TIMEOUT_MS) and one second more',
    );
  }
  const testCrashPoint = reader.testSwitch(
    'PAYMENT_TEST_CRASH_POINT',
    'makes the process kill itself during every payment',
  )
    ? reader.oneOf('PAYMENT_TEST_CRASH_POINT', PAYMENT_CRASH_POINTS, PAYMENT_CRASH_POINTS[0])
    : undefined;
  const payoutInterval = reader.optional('PROVIDER_SANDBOX_PAYOUT_INTERVAL_MS');
  const reconciliationIntervalMinutes = reader.integer('PAYMENT_RECONCILIATION_INTERVAL_MINUTES', 15, 0, 60);
  if (reconciliationIntervalMinutes > 0 && 60 % reconciliationIntervalMinutes !== 0) {
    reader.problem(
      'PAYMENT_RECONCILIATION_INTERVAL_MINUTES must divide 60 (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60) or be 0',
    );
  }
  return reader.parsed({
    provider: { url, apiKey, webhookSecret },
    sandbox: {
      faults: reader.optional('PROVIDER_SANDBOX_FAULTS'),
      payoutIntervalMs:
        payoutInterval === undefined
          ? undefined
          : reader.integer('PROVIDER_SANDBOX_PAYOUT_INTERVAL_MS', 0, 0, 86_400_000),
    },
    providerTimeoutMs,
    leaseSeconds,
    reconciliationIntervalMinutes,
    recovery: {
      intervalMs: reader.integer('PAYMENT_RECOVERY_INTERVAL_MS', 30_000, 100, 3_600_000),
      maxAttempts: reader.integer('PAYMENT_RECOVERY_MAX_ATTEMPTS', 10, 1, 1000),
    },
    testCrashPoint,
  });
}

function providerUrl(reader: EnvReader): string | undefined {
  const raw = reader.optional('PAYMENT_PROVIDER_URL');
  if (raw === undefined) return undefined;
  try {
    const url = new URL(raw);
    if (url.protocol === 'http:' || url.protocol === 'https:') return raw;
  } catch {
    // reported below
  }
  reader.problem(`PAYMENT_PROVIDER_URL must be an http(s) URL (got "${raw}")`);
  return undefined;
}
