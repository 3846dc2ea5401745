import { type DatabaseConfig, parseDatabaseConfig } from '@ledgerkey/database';
import { type IdempotencyConfig, parseIdempotencyConfig } from '@ledgerkey/idempotency';
import { type JobsConfig, parseJobsConfig } from '@ledgerkey/jobs';
import { parsePaymentsConfig, type PaymentsConfig } from '@ledgerkey/payments';
import { type Env, parseProcessConfig, type ProcessConfig, throwOnProblems } from '@ledgerkey/process';
import { parseSecretsConfig, type SecretsOptions } from '@ledgerkey/secrets';
import { parseWebhookConfig, type WebhookOptions } from '@ledgerkey/webhooks';

/**
 * The standalone worker's configuration: only the variables it uses, under the same names as the
 * API's, so one set of variables serves a deployment. Parsed once at boot; every problem is
 * reported at once, naming the variable.
 */
export interface WorkerConfig {
  process: ProcessConfig;
  /** `url` is set: the embedded database belongs to the API process, which runs its own worker. */
  database: DatabaseConfig & { url: string };
  /** The same key as the API's (SECRETS_KEY, or the shared DATA_DIR): deliveries open the secrets it sealed. */
  secrets: SecretsOptions;
  jobs: JobsConfig;
  webhooks: WebhookOptions;
  /** IDEMPOTENCY_KEY_TTL: a payment the recovery finishes replays that long. */
  idempotency: Pick<IdempotencyConfig, 'ttlSeconds'>;
  /** The provider's URL is set: the bundled sandbox belongs to the API process (npm start). */
  payments: PaymentsConfig;
}

/** @throws ConfigError naming every bad variable, and DATABASE_URL when it is unset */
export function loadConfig(env: Env): WorkerConfig {
  const processConfig = parseProcessConfig(env);
  const database = parseDatabaseConfig(env);
  const secrets = parseSecretsConfig(env, database.options.dataDir);
  const jobs = parseJobsConfig(env);
  const webhooks = parseWebhookConfig(env);
  const idempotency = parseIdempotencyConfig(env);
  const payments = parsePaymentsConfig(env);
  const { url } = database.options;
  const worker = { problems: [] as string[] };
  if (url === undefined) {
    worker.problems.push(
      'DATABASE_URL must be set for the standalone worker (npm start runs a worker inside the API instead)',
    );
  }
  if (payments.options.provider.url === undefined) {
    worker.problems.push(
      'PAYMENT_PROVIDER_URL must be set for the standalone worker: it resumes interrupted payments (npm ' +
        'start runs the provider sandbox and a worker inside the API instead)',
    );
  }
  throwOnProblems(processConfig, database, secrets, jobs, webhooks, idempotency, payments, worker);
  return {
    process: processConfig.options,
    database: { ...database.options, url: url as string },
    secrets: secrets.options,
    jobs: jobs.options,
    webhooks: webhooks.options,
    idempotency: { ttlSeconds: idempotency.options.ttlSeconds },
    payments: payments.options,
  };
}
