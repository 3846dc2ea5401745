import { type DatabaseConfig, defaultPoolSize, parseDatabaseConfig } from '@ledgerkey/database';
import { type IdempotencyConfig, parseIdempotencyConfig } from '@ledgerkey/idempotency';
import { type JobsConfig, parseJobsConfig } from '@ledgerkey/jobs';
import { parsePaymentsConfig, type PaymentsConfig } from '@ledgerkey/payments';
import {
  type Env,
  EnvReader,
  parseProcessConfig,
  type ProcessConfig,
  throwOnProblems,
} from '@ledgerkey/process';
import { parseSecretsConfig, type SecretsOptions } from '@ledgerkey/secrets';
import { parseRateLimitConfig, type RateLimitConfig } from '@ledgerkey/tenancy';
import { parseWebhookConfig, type WebhookOptions } from '@ledgerkey/webhooks';

/**
 * The API process's configuration, parsed once from the environment at boot: its own variables
 * and those of the libs it runs (each lib parses its own). Nothing else reads process.env.
 * Every problem is reported at once, naming the variable.
 */
export interface ApiConfig {
  port: number;
  host: string;
  /** DATABASE_POOL_SIZE: connections of this process's pool (default: twice the cores, at least 4). */
  databasePoolSize: number;
  adminApiToken: string | undefined;
  requestBodyLimitBytes: number;
  seedDemoCompany: boolean;
  /** RUN_WORKER: run the job worker (webhook delivery) inside the API process. */
  runWorker: boolean;
  /**
   * IDLE_GC_AFTER_MS: after this long without a request (following some), one full collection gives
   * the load's garbage back (IdleCollector); 0 turns it off.
   */
  idleGcAfterMs: number;
  process: ProcessConfig;
  database: DatabaseConfig;
  secrets: SecretsOptions;
  idempotency: IdempotencyConfig;
  jobs: JobsConfig;
  webhooks: WebhookOptions;
  /** The provider's URL is unset until main.ts started the bundled sandbox (preparePaymentProvider). */
  payments: PaymentsConfig;
  rateLimits: RateLimitConfig;
}

/** @throws ConfigError naming every bad variable */
export function loadConfig(env: Env): ApiConfig {
  const processConfig = parseProcessConfig(env);
  const database = parseDatabaseConfig(env);
  const secrets = parseSecretsConfig(env, database.options.dataDir);
  const idempotency = parseIdempotencyConfig(env);
  const jobs = parseJobsConfig(env);
  const webhooks = parseWebhookConfig(env);
  const payments = parsePaymentsConfig(env);
  const rateLimits = parseRateLimitConfig(env);

  const reader = new EnvReader(env);
  const adminApiToken = reader.optional('ADMIN_API_TOKEN');
  if (adminApiToken !== undefined && adminApiToken.length < 16) {
    reader.problem('ADMIN_API_TOKEN must be at least 16 characters');
  }
  // The demo company's API key is printed at start: a development convenience, never a production log line.
  const production = reader.optional('NODE_ENV') === 'production';
  const seedDemoCompany = reader.boolean('SEED_DEMO_COMPANY', !production);
  if (production && seedDemoCompany) {
    reader.problem(
      'SEED_DEMO_COMPANY=true prints an API key into the logs: it is refused with NODE_ENV=production ' +
        '(create companies with `company:create` or POST /admin/companies)',
    );
  }
  const api = reader.parsed({
    port: reader.integer('PORT', 3000, 0, 65535),
    host: reader.optional('HOST') ?? '127.0.0.1',
    databasePoolSize: reader.integer('DATABASE_POOL_SIZE', defaultPoolSize(), 1, 200),
    adminApiToken,
    requestBodyLimitBytes: reader.integer('REQUEST_BODY_LIMIT_BYTES', 1_048_576, 1024, 16 * 1_048_576),
    seedDemoCompany,
    runWorker: reader.boolean('RUN_WORKER', true),
    idleGcAfterMs: reader.integer('IDLE_GC_AFTER_MS', 5000, 0, 3_600_000),
  });
  throwOnProblems(api, processConfig, database, secrets, idempotency, jobs, webhooks, payments, rateLimits);
  return {
    ...api.options,
    process: processConfig.options,
    database: database.options,
    secrets: secrets.options,
    idempotency: idempotency.options,
    jobs: jobs.options,
    webhooks: webhooks.options,
    payments: payments.options,
    rateLimits: rateLimits.options,
  };
}

export const API_CONFIG = Symbol('API_CONFIG');
