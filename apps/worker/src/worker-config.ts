import type { WebhookOptions } from '@ledgerkey/webhooks';
import type { AppConfig } from '../../api/src/config';
import type { JobRunnerOptions } from '@ledgerkey/jobs';

/**
 * The worker reads the same configuration as the API (one set of variables per deployment),
 * parsed by the API's `loadConfig`.
 */
export function webhookOptionsOf(config: AppConfig): WebhookOptions {
  return {
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    retryScheduleSeconds: config.webhookRetryScheduleSeconds,
    timeoutMs: config.webhookTimeoutMs,
    leaseMs: config.webhookLeaseMs,
    sweepIntervalMs: config.webhookSweepIntervalMs,
  };
}

export function jobRunnerOptionsOf(config: AppConfig, databaseUrl: string): JobRunnerOptions {
  return {
    connectionString: databaseUrl,
    concurrency: config.workerConcurrency,
  };
}
