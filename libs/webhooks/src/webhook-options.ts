/** Settings of webhook registration and delivery, from the process configuration. */
export interface WebhookOptions {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: loopback/private targets allowed (development, tests). */
  allowPrivateTargets: boolean;
  /** WEBHOOK_RETRY_SCHEDULE: delays between attempts, seconds. */
  retryScheduleSeconds: readonly number[];
  /** WEBHOOK_TIMEOUT_MS: one attempt, DNS to status line. */
  timeoutMs: number;
  /**
   * WEBHOOK_LEASE_SECONDS, in ms: how long a worker owns a delivery for one attempt. Longer than
   * `timeoutMs`, so a live worker always records its result before its lease runs out.
   */
  leaseMs: number;
  /**
   * WEBHOOK_SWEEP_INTERVAL_MS: how often each worker process sweeps for deliveries a dead worker
   * left, besides the queue-wide sweep every minute.
   */
  sweepIntervalMs: number;
}

export const WEBHOOK_OPTIONS = Symbol('WEBHOOK_OPTIONS');
