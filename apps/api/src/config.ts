import { join } from 'node:path';
import { InvalidSecretsKeyError, parseSecretsKey, type SecretsOptions } from '@ledgerkey/secrets';

/**
 * The process configuration, parsed once from the environment at boot. Nothing else reads
 * process.env. Every problem is reported at once, naming the variable.
 */
export interface AppConfig {
  port: number;
  host: string;
  /** undefined → embedded PostgreSQL under `dataDir` */
  databaseUrl: string | undefined;
  dataDir: string;
  databasePoolSize: number;
  /** Longest a statement (a lock wait included) may run before it is canceled; 503 + Retry-After. */
  databaseStatementTimeoutMs: number;
  adminApiToken: string | undefined;
  idempotencyKeyTtlSeconds: number;
  requestBodyLimitBytes: number;
  seedDemoCompany: boolean;
  logLevel: 'error' | 'warn' | 'log' | 'debug';
  /** RUN_WORKER: run the job worker (webhook delivery) inside the API process. */
  runWorker: boolean;
  /** Jobs one worker process runs at once. */
  workerConcurrency: number;
  /** How often each worker process sweeps for deliveries a dead worker left (ms). */
  webhookSweepIntervalMs: number;
  webhookAllowPrivateTargets: boolean;
  /** Delays between delivery attempts, seconds; the last one is followed by `failed`. */
  webhookRetryScheduleSeconds: number[];
  webhookTimeoutMs: number;
  /** How long a worker owns a delivery for one attempt; longer than the timeout. */
  webhookLeaseMs: number;
  /** SECRETS_KEY: seals secrets at rest; undefined → the key file under `dataDir` (created on first start). */
  secretsKey: Buffer | undefined;
  /** SECRETS_KEY_PREVIOUS: during a rotation, opens what the previous key sealed. */
  secretsKeyPrevious: Buffer | undefined;
  /** BENCHMARK_DISABLE_IDEMPOTENCY: benchmark only, measures the idempotency layer's cost. */
  benchmarkDisableIdempotency: boolean;
  /** A stop (SIGTERM, SIGINT) ends the process within this bound, whatever the database does. */
  shutdownTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env): AppConfig {
  const problems: string[] = [];
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const boolean = (name: string, fallback: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const optional = (name: string): string | undefined => {
    const raw = env[name];
    return raw === undefined || raw === '' ? undefined : raw;
  };

  const databaseUrl = optional('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const adminApiToken = optional('ADMIN_API_TOKEN');
  if (adminApiToken !== undefined && adminApiToken.length < 16) {
    problems.push('ADMIN_API_TOKEN must be at least 16 characters');
  }
  const logLevel = optional('LOG_LEVEL') ?? 'log';
  if (!['error', 'warn', 'log', 'debug'].includes(logLevel)) {
    problems.push('LOG_LEVEL must be one of error, warn, log, debug');
  }

  const retrySchedule = (name: string, fallback: number[]): number[] => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const parts = raw.split(',').map((part) => part.trim());
    if (parts.length > 50 || !parts.every((part) => /^\d{1,7}$/.test(part) && Number(part) <= 30 * 86_400)) {
      problems.push(
        `${name} must be 1–50 comma-separated delays in seconds, each 0 to 2592000 (got "${raw}")`,
      );
      return fallback;
    }
    return parts.map(Number);
  };
  const secretsKey = (name: string): Buffer | undefined => {
    const raw = optional(name);
    if (raw === undefined) return undefined;
    try {
      return parseSecretsKey(raw);
    } catch (error) {
      if (!(error instanceof InvalidSecretsKeyError)) throw error;
      problems.push(`${name} ${error.message}`);
      return undefined;
    }
  };
  const secretsKeyCurrent = secretsKey('SECRETS_KEY');
  const secretsKeyPrevious = secretsKey('SECRETS_KEY_PREVIOUS');
  if (secretsKeyPrevious !== undefined && optional('SECRETS_KEY') === undefined) {
    problems.push('SECRETS_KEY_PREVIOUS needs SECRETS_KEY (the key that replaces it)');
  }
  if (secretsKeyCurrent !== undefined && secretsKeyPrevious?.equals(secretsKeyCurrent)) {
    problems.push('SECRETS_KEY_PREVIOUS must differ from SECRETS_KEY');
  }

  const webhookTimeoutMs = integer('WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000);
  const webhookLeaseMs = integer('WEBHOOK_LEASE_SECONDS', 60, 1, 3600) * 1000;
  if (webhookLeaseMs < webhookTimeoutMs + 1000) {
    problems.push('WEBHOOK_LEASE_SECONDS must exceed WEBHOOK_TIMEOUT_MS by at least one second');
  }

  const config: AppConfig = {
    port: integer('PORT', 3000, 0, 65535),
    host: optional('HOST') ?? '127.0.0.1',
    databaseUrl,
    dataDir: optional('DATA_DIR') ?? '.data',
    databasePoolSize: integer('DATABASE_POOL_SIZE', 10, 1, 200),
    databaseStatementTimeoutMs: integer('DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
    adminApiToken,
    idempotencyKeyTtlSeconds: integer('IDEMPOTENCY_KEY_TTL', 86_400, 1, 31 * 86_400),
    requestBodyLimitBytes: integer('REQUEST_BODY_LIMIT_BYTES', 1_048_576, 1024, 16 * 1_048_576),
    seedDemoCompany: boolean('SEED_DEMO_COMPANY', true),
    logLevel: logLevel as AppConfig['logLevel'],
    runWorker: boolean('RUN_WORKER', true),
    workerConcurrency: integer('WORKER_CONCURRENCY', 5, 1, 100),
    webhookSweepIntervalMs: integer('WEBHOOK_SWEEP_INTERVAL_MS', 30_000, 100, 3_600_000),
    webhookAllowPrivateTargets: boolean('WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    webhookRetryScheduleSeconds: retrySchedule(
      'WEBHOOK_RETRY_SCHEDULE',
      [5, 300, 1800, 7200, 18000, 36000, 36000],
    ),
    webhookTimeoutMs,
    webhookLeaseMs,
    secretsKey: secretsKeyCurrent,
    secretsKeyPrevious,
    benchmarkDisableIdempotency: boolean('BENCHMARK_DISABLE_IDEMPOTENCY', false),
    shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', 10_000, 1000, 600_000),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** The name of the generated key file inside DATA_DIR. */
export const SECRETS_KEY_FILE = 'secrets.key';

/** Where this process's secrets keys come from: SECRETS_KEY, else `${DATA_DIR}/secrets.key`. */
export function secretsOptionsOf(config: AppConfig): SecretsOptions {
  return {
    key: config.secretsKey,
    previousKey: config.secretsKeyPrevious,
    keyFile: join(config.dataDir, SECRETS_KEY_FILE),
  };
}
