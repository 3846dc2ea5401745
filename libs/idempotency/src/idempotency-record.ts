/**
 * The persisted state of one idempotency key. Framework-free: no Nest, no Express, no SQL.
 *
 *   (no record) ──execute──▶ completed | failed_final                       local operations,
 *                                                                           one transaction
 *   (no record) ──begin(lease)──▶ in_progress ──complete──▶ completed
 *                                  │     ▲    ──fail final──▶ failed_final
 *                                  │     │    ──fail retryable──▶ failed_retryable
 *                  lease expired or failed_retryable ──take over (attempt + 1)──┘
 *
 * A finished record (completed, failed_final) holds the answer every retry replays until
 * `expiresAt`; after that the key is new. An unfinished one never expires into a new key: it
 * is resumed by whoever takes it over once its lease has run out.
 */

/** The scope of a key: tenant (or the operator scope), operation, and the client's key. */
export interface IdempotencyKeyRef {
  tenantId: string;
  operation: string;
  key: string;
}

/** A response as it is stored and replayed: status, the headers worth replaying, exact body. */
export interface RecordedResponse {
  status: number;
  /** Replayed verbatim, `Content-Type` included. */
  headers: Record<string, string>;
  body: string;
}

/** A recorded response as the store holds it: the body is sealed when `sealed` is true. */
export interface StoredResponse extends RecordedResponse {
  sealed: boolean;
}

export const IDEMPOTENCY_RECORD_STATES = [
  'in_progress',
  'completed',
  'failed_retryable',
  'failed_final',
] as const;

export type IdempotencyRecordState = (typeof IDEMPOTENCY_RECORD_STATES)[number];

interface RecordBase {
  /** SHA-256 of the normalized request (see `fingerprintOf`). */
  fingerprint: Buffer;
  /**
   * Finished records: until when the answer replays. Unfinished ones: when the replay window
   * would end had the operation finished at its start (completion sets it anew).
   */
  expiresAt: Date;
  /** The fencing token: 1 on the first execution, incremented by every take-over. */
  attempt: number;
  /** How far an operation with external effects got (set by the operation, e.g. `charge_requested`). */
  recoveryPoint: string | null;
  /**
   * SHA-256 of the exact request bytes that wrote the record, when the caller had them (HTTP):
   * a retry with the same bytes replays without being validated and normalized again.
   */
  requestDigest?: Buffer | null;
}

/** The operation finished and its answer is stored. */
export interface CompletedRecord extends RecordBase {
  state: 'completed';
  response: StoredResponse;
}

/** The operation ended in a final failure (e.g. a business rejection); its answer is stored. */
export interface FailedFinalRecord extends RecordBase {
  state: 'failed_final';
  response: StoredResponse;
}

/** The operation is running under a lease; nobody else may act on the key until it expires. */
export interface InProgressRecord extends RecordBase {
  state: 'in_progress';
  leaseExpiresAt: Date;
}

/** The operation stopped without an outcome; the next request (or recovery) takes it over. */
export interface FailedRetryableRecord extends RecordBase {
  state: 'failed_retryable';
}

export type FinishedRecord = CompletedRecord | FailedFinalRecord;
export type UnfinishedRecord = InProgressRecord | FailedRetryableRecord;
export type IdempotencyRecord = FinishedRecord | UnfinishedRecord;

export function isFinished(record: IdempotencyRecord): record is FinishedRecord {
  return record.state === 'completed' || record.state === 'failed_final';
}

/** A lease on an unfinished operation: who holds it (the attempt) and until when. */
export interface Lease {
  attempt: number;
  expiresAt: Date;
}

/**
 * The tenant id of operator keys (admin routes, the operator CLI): the nil UUID, which no
 * company has. Operator operations share one key scope wherever they are called from.
 */
export const OPERATOR_TENANT_ID = '00000000-0000-0000-0000-000000000000';
