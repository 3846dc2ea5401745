import { queryRows, type SqlClient } from '@ledgerkey/database';

/** Events whose delivery is not finished, across all companies (an operational figure). */
export interface DeliveryBacklog {
  /** Undelivered events. */
  events: number;
  /** Age of the oldest undelivered event in seconds; 0 when there is none. */
  oldestAgeSeconds: number;
}

/**
 * An event is undelivered while one of its webhook deliveries is pending (the outbox creates them
 * with the event). Deliveries that finished as failed or canceled are not backlog: nothing will
 * send them any more.
 */
export async function readDeliveryBacklog(db: SqlClient): Promise<DeliveryBacklog> {
  const [row] = await queryRows<{ events: number; oldest_age_seconds: number }>(
    db,
    // Pending deliveries via ix_webhook_deliveries_pending; their events by key.
    `WITH undelivered AS (
       SELECT DISTINCT d.company_id, d.event_id FROM webhook_deliveries d WHERE d.status = 'pending'
     )
     SELECT count(*)::int AS events,
            coalesce(extract(epoch FROM now() - min(e.created_at)), 0)::float8 AS oldest_age_seconds
       FROM undelivered u
       JOIN events e ON e.company_id = u.company_id AND e.id = u.event_id`,
  );
  return { events: row.events, oldestAgeSeconds: Math.max(0, row.oldest_age_seconds) };
}

/** How a webhook attempt ended (`webhook_attempts.result`). */
export const DELIVERY_ATTEMPT_RESULTS = ['succeeded', 'failed', 'abandoned'] as const;
export type DeliveryAttemptResult = (typeof DELIVERY_ATTEMPT_RESULTS)[number];

/**
 * Every webhook attempt ever recorded, by result, across all companies. A full count: attempts
 * are immutable history, so the totals only grow, like a counter's.
 */
export async function countDeliveryAttempts(db: SqlClient): Promise<Record<DeliveryAttemptResult, number>> {
  const rows = await queryRows<{ result: DeliveryAttemptResult; attempts: number }>(
    db,
    `SELECT result, count(*)::float8 AS attempts FROM webhook_attempts GROUP BY result`,
  );
  const counts = { succeeded: 0, failed: 0, abandoned: 0 };
  for (const row of rows) counts[row.result] = row.attempts;
  return counts;
}
