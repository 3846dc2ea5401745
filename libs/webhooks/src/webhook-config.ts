import { type Env, EnvReader, type ParsedConfig } from '@ledgerkey/process';
import type { WebhookOptions } from './webhook-options';

const DEFAULT_RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18000, 36000, 36000];
const MAX_RETRY_DELAY_SECONDS = 30 * 86_400;

/** The WEBHOOK_* variables; the lease must outlast an attempt's timeout by a second. */
export function parseWebhookConfig(env: Env): ParsedConfig<WebhookOptions> {
  const reader = new EnvReader(env);
  const timeoutMs = reader.integer('WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000);
  const leaseMs = reader.integer('WEBHOOK_LEASE_SECONDS', 60, 1, 3600) * 1000;
  if (leaseMs < timeoutMs + 1000) {
    reader.problem('WEBHOOK_LEASE_SECONDS must exceed WEBHOOK_TIMEOUT_MS by at least one second');
  }
  return reader.parsed({
    allowPrivateTargets: reader.boolean('WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    retryScheduleSeconds: retrySchedule(reader, 'WEBHOOK_RETRY_SCHEDULE'),
    timeoutMs,
    leaseMs,
    sweepIntervalMs: reader.integer('WEBHOOK_SWEEP_INTERVAL_MS', 30_000, 100, 3_600_000),
  });
}

function retrySchedule(reader: EnvReader, name: string): number[] {
  const raw = reader.optional(name);
  if (raw === undefined) return DEFAULT_RETRY_SCHEDULE_SECONDS;
  const parts = raw.split(',').map((part) => part.trim());
  if (
    parts.length > 50 ||
    !parts.every((part) => /^\d{1,7}$/.test(part) && Number(part) <= MAX_RETRY_DELAY_SECONDS)
  ) {
    reader.problem(
      `${name} must be 1–50 comma-separated delays in seconds, each 0 to ${MAX_RETRY_DELAY_SECONDS} (got "${raw}")`,
    );
    return DEFAULT_RETRY_SCHEDULE_SECONDS;
  }
  return parts.map(Number);
}
