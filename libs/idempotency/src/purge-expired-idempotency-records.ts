import { queryRows, type SqlClient } from '@ledgerkey/database';

export interface PurgeOptions {
  /** Records deleted per statement (default 500): each statement is one short transaction. */
  batchSize?: number;
  /** Upper bound for one run (default 50 000); the next run continues where this one stopped. */
  maxPerRun?: number;
}

const DEFAULT_BATCH_SIZE = 500;
const DEFAULT_MAX_PER_RUN = 50_000;

/**
 * Deletes expired finished idempotency records (completed or failed_final with `expires_at <=
 * now()`, the same test as the key lookup; unfinished operations are never purged), oldest first, in bounded batches until a batch comes back short or `maxPerRun` is reached.
 * Runs outside any request transaction, each batch in autocommit.
 * @returns how many records were deleted
 * @throws RangeError when batchSize or maxPerRun is not a positive integer
 */
export async function purgeExpiredIdempotencyRecords(
  db: SqlClient,
  options: PurgeOptions = {},
): Promise<number> {
  const batchSize = positiveInteger('batchSize', options.batchSize ?? DEFAULT_BATCH_SIZE);
  const maxPerRun = positiveInteger('maxPerRun', options.maxPerRun ?? DEFAULT_MAX_PER_RUN);
  let purged = 0;
  while (purged < maxPerRun) {
    const limit = Math.min(batchSize, maxPerRun - purged);
    const [{ deleted }] = await queryRows<{ deleted: number }>(
      db,
      // Walks ix_idempotency_records_expires_at and deletes by ctid (a TID scan), so a batch
      // touches only its own rows. SKIP LOCKED: a row locked by a request (which deletes an
      // expired record of its key before reusing it) is left alone instead of waited for, so
      // the purge never blocks a request and a request waits at most for one short batch.
      `WITH deleted AS (
         DELETE FROM idempotency_records
          WHERE ctid IN (SELECT ctid FROM idempotency_records
                          WHERE expires_at <= now() AND state IN ('completed', 'failed_final')
                          ORDER BY expires_at
                          LIMIT $1
                            FOR UPDATE SKIP LOCKED)
         RETURNING 1
       )
       SELECT count(*)::int AS deleted FROM deleted`,
      [limit],
    );
    purged += deleted;
    if (deleted < limit) break;
  }
  return purged;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer (got ${value})`);
  }
  return value;
}
