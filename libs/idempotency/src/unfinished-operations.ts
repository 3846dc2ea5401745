import { queryRows, type SqlClient } from '@ledgerkey/database';

/** Age classes of unfinished operations (since the operation started), for the "stuck" metric. */
export const UNFINISHED_AGE_CLASSES = ['under_1m', '1m_to_10m', '10m_to_1h', 'over_1h'] as const;
export type UnfinishedAgeClass = (typeof UNFINISHED_AGE_CLASSES)[number];

export interface UnfinishedOperations {
  operation: string;
  state: 'in_progress' | 'failed_retryable';
  age: UnfinishedAgeClass;
  count: number;
  /** Age of the oldest of them, in seconds. */
  oldestAgeSeconds: number;
}

/**
 * Unfinished operations (effects outside the database: in progress, or released without an
 * outcome) across all tenants, by operation, state and age class: what is stuck and for how long.
 * One statement on ix_idempotency_records_unfinished (unfinished rows only); an operational
 * figure read at scrape time.
 */
export async function readUnfinishedOperations(db: SqlClient): Promise<UnfinishedOperations[]> {
  const rows = await queryRows<{
    operation: string;
    state: 'in_progress' | 'failed_retryable';
    age: UnfinishedAgeClass;
    count: number;
    oldest_age_seconds: number;
  }>(
    db,
    `SELECT operation, state, age, count(*)::int AS count, max(age_seconds)::float8 AS oldest_age_seconds
       FROM (SELECT operation, state, extract(epoch FROM now() - created_at) AS age_seconds,
                    CASE WHEN created_at > now() - interval '1 minute' THEN 'under_1m'
                         WHEN created_at > now() - interval '10 minutes' THEN '1m_to_10m'
                         WHEN created_at > now() - interval '1 hour' THEN '10m_to_1h'
                         ELSE 'over_1h' END AS age
               FROM idempotency_records
              WHERE state IN ('in_progress', 'failed_retryable')) unfinished
      GROUP BY operation, state, age`,
  );
  return rows.map((row) => ({
    operation: row.operation,
    state: row.state,
    age: row.age,
    count: row.count,
    oldestAgeSeconds: Math.max(0, row.oldest_age_seconds),
  }));
}
