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
}

export const WEBHOOK_OPTIONS = Symbol('WEBHOOK_OPTIONS');

/** Task names of webhook jobs in the job queue (besides the outbox's `fan_out_event`). */
export const WebhookTask = {
  /**
   * One attempt of one delivery; payload `{ companyId, deliveryId }` (jobs queued before
   * TenantKeys1765500000000: `{ deliveryId }`), job key `deliver:<deliveryId>`.
   */
  DeliverWebhook: 'deliver_webhook',
  /** Recovers deliveries whose worker died (expired lease); run by crontab and by each worker. */
  SweepWebhookLeases: 'sweep_webhook_leases',
} as const;
