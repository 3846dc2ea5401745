import type { KeyClaim } from './idempotency-ports';
import type { FinishedRecord, IdempotencyRecord, UnfinishedRecord } from './idempotency-record';
import { isFinished } from './idempotency-record';

/** What a request must do with its key, given what the claim found. */
export type KeyDecision =
  /** No (unexpired) record and the caller holds the key: run the operation. */
  | { action: 'execute' }
  /** Same payload, finished: send the stored answer again. */
  | { action: 'replay'; record: FinishedRecord }
  /** The key was used with another payload: `422 idempotency_key_reused`. */
  | { action: 'reject_mismatch' }
  /** Another request holds the key, or its lease still runs: `409 idempotency_key_in_use`. */
  | { action: 'reject_busy' }
  /**
   * Same payload, unfinished, nobody holds it (lease expired, or failed_retryable), and the
   * caller holds the key: take it over and resume from `record.recoveryPoint`.
   */
  | { action: 'resume'; record: UnfinishedRecord };

/**
 * The protocol's decision table. Pure: the same claim, fingerprint and time give the same answer.
 *
 * | record                                   | lock held   | decision |
 * |------------------------------------------|-------------|----------|
 * | none, or finished and expired            | yes / no    | execute / busy |
 * | other payload (not expired)              | any         | mismatch |
 * | completed, failed_final                  | any         | replay   |
 * | in_progress, lease running               | any         | busy     |
 * | in_progress lease expired, failed_retryable | yes / no | resume / busy |
 */
export function decide(claim: KeyClaim, fingerprint: Buffer, now: Date): KeyDecision {
  const record = claim.record !== null && !isExpired(claim.record, now) ? claim.record : null;
  if (record === null) return claim.held ? { action: 'execute' } : { action: 'reject_busy' };
  if (!record.fingerprint.equals(fingerprint)) return { action: 'reject_mismatch' };
  if (isFinished(record)) return { action: 'replay', record };
  if (record.state === 'in_progress' && record.leaseExpiresAt > now) return { action: 'reject_busy' };
  return claim.held ? { action: 'resume', record } : { action: 'reject_busy' };
}

/** A finished record past its window names nothing: its key is new. Unfinished ones never expire. */
export function isExpired(record: IdempotencyRecord, now: Date): boolean {
  return isFinished(record) && record.expiresAt <= now;
}
