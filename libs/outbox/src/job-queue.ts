import { runMigrations } from 'graphile-worker';

/** Task names of the Postgres-backed job queue (graphile-worker). */
export const Task = {
  /**
   * Creates one webhook delivery per subscribed endpoint of an event. Payload
   * `{ companyId, eventId }` (jobs queued before TenantKeys1765500000000, and those the sweeper
   * re-queues from their key: `{ eventId }`), job key `fan_out:<eventId>`.
   */
  FanOutEvent: 'fan_out_event',
} as const;

/**
 * Installs or upgrades the job queue's own schema (`graphile_worker`). Run at boot, after our
 * migrations: documents enqueue jobs in their own transaction, so the schema must exist before
 * the first request.
 */
export async function installJobQueue(connectionString: string): Promise<void> {
  await runMigrations({ connectionString, logger: undefined });
}
