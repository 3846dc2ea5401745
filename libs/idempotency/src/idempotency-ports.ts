import type { StalledOperation, StalledOperationsQuery } from './external-effect';
import type {
  FinishedRecord,
  IdempotencyKeyRef,
  IdempotencyRecord,
  Lease,
  RecordedResponse,
  StoredResponse,
  UnfinishedRecord,
} from './idempotency-record';

/**
 * The ports of the idempotency protocol. Framework-free: the Nest module wires them to
 * nestjs-cls transactions and the SQL store; handler tests wire the same ones by hand.
 */

/** Opens the transactions the protocol runs in. */
export interface TransactionRunner {
  /**
   * Runs `work` in a new transaction: COMMIT when it resolves, ROLLBACK when it rejects. The
   * store's calls and the operation made by `work` run in that transaction.
   * @throws Error when called inside a transaction: the protocol owns its transactions (a
   *   business rejection must be able to roll back everything the operation wrote)
   */
  run<T>(work: () => Promise<T>): Promise<T>;
}

/** What `IdempotencyRecordStore.claim` found. */
export type KeyClaim =
  /**
   * The caller holds the key's lock until its transaction ends. `record` is the key's state as
   * the previous holder left it; null when there is none (an expired finished record has been
   * removed: the key is new).
   */
  | { held: true; record: IdempotencyRecord | null }
  /**
   * No lock taken. `record` is a finished, unexpired record or an operation whose lease still
   * runs (read without the lock); null when another transaction holds the key's lock.
   */
  | { held: false; record: FinishedRecord | UnfinishedRecord | null };

/**
 * The persisted records and their transitions. Every method runs in the caller's current
 * transaction and throws when there is none. Timestamps come from the caller's clock (`now`).
 * Transitions of unfinished records name the attempt they belong to (the fencing token) and
 * throw `IdempotencyLeaseLostError` when the record is no longer that attempt's.
 */
export interface IdempotencyRecordStore {
  /**
   * The key's finished, unexpired record, read on its own — no transaction, no lock: a finished
   * record never changes until it expires, so one indexed read may answer a retry.
   */
  findFinished(ref: IdempotencyKeyRef, now: Date): Promise<FinishedRecord | null>;

  /**
   * The key's record, locking the key only when needed: a finished record needs no lock.
   * Takes the lock without waiting (a busy key answers at once); the lock is released by
   * COMMIT or ROLLBACK, also when a crashed process's connection drops.
   */
  claim(ref: IdempotencyKeyRef, now: Date): Promise<KeyClaim>;

  /**
   * no record → completed | failed_final, in the transaction of the operation's effects (one
   * transaction for local operations). Requires the key's lock (a held claim).
   * @throws IdempotencyKeyInUseError when a record appeared anyway (lock hash collision)
   */
  insertFinished(
    ref: IdempotencyKeyRef,
    outcome: FinishedOutcome & { fingerprint: Buffer; requestDigest: Buffer | null },
    now: Date,
  ): Promise<void>;

  /**
   * no record → in_progress with a lease, attempt 1. Commit it before an external call, so a
   * crash leaves a record that a later request can take over. Requires a held claim.
   * @throws IdempotencyKeyInUseError when a record appeared anyway (lock hash collision)
   */
  begin(
    ref: IdempotencyKeyRef,
    start: {
      fingerprint: Buffer;
      requestDigest?: Buffer | null;
      leaseExpiresAt: Date;
      recoveryPoint: string;
      expiresAt: Date;
    },
    now: Date,
  ): Promise<Lease>;

  /**
   * in_progress with an expired lease, or failed_retryable → in_progress with a new lease and
   * the next attempt. Requires a held claim that returned `record`.
   * @returns the new lease, or null when the record changed meanwhile (someone else acted)
   */
  takeOver(
    ref: IdempotencyKeyRef,
    record: UnfinishedRecord,
    leaseExpiresAt: Date,
    now: Date,
  ): Promise<Lease | null>;

  /**
   * in_progress → in_progress: records the recovery point reached and extends the lease.
   * @throws IdempotencyLeaseLostError when `lease` is no longer the record's
   */
  checkpoint(
    ref: IdempotencyKeyRef,
    lease: Lease,
    recoveryPoint: string,
    leaseExpiresAt: Date,
    now: Date,
  ): Promise<Lease>;

  /**
   * Locks the record of a running operation for the rest of the transaction, fenced by its
   * attempt: the transaction that writes the outcome takes it first, so a take-over waits for it
   * (and then finds the key finished), and an attempt that was taken over writes nothing.
   * @throws IdempotencyLeaseLostError when `lease` is no longer the record's
   */
  hold(ref: IdempotencyKeyRef, lease: Lease): Promise<void>;

  /**
   * in_progress → completed | failed_final, storing the answer; the replay window starts now.
   * Commit it with the outcome's effects.
   * @throws IdempotencyLeaseLostError when `lease` is no longer the record's
   */
  finish(ref: IdempotencyKeyRef, lease: Lease, outcome: FinishedOutcome, now: Date): Promise<void>;

  /**
   * in_progress → failed_retryable: the operation stopped without an outcome; the next
   * request or the recovery takes it over at once (no lease to wait for).
   * @throws IdempotencyLeaseLostError when `lease` is no longer the record's
   */
  failRetryable(ref: IdempotencyKeyRef, lease: Lease, recoveryPoint: string | null, now: Date): Promise<void>;

  /**
   * Unfinished operations of `query.operation` that nobody holds and whose backoff has passed,
   * oldest first; autocommit, no lock (the take-over decides who acts).
   */
  findStalled(query: StalledOperationsQuery, now: Date): Promise<StalledOperation[]>;
}

/** How an operation ended, as stored. */
export interface FinishedOutcome {
  state: FinishedRecord['state'];
  response: StoredResponse;
  expiresAt: Date;
}

/** Where the protocol reads the time (tests move it). */
export interface Clock {
  now(): Date;
}

export const SYSTEM_CLOCK: Clock = { now: () => new Date() };

/** Tells business outcomes from failures. */
export interface OutcomeClassifier {
  /**
   * The response to store and replay for an error the operation raised as a business outcome
   * (a known domain error, e.g. `409 order_already_invoiced`), or null for a failure that must
   * leave no trace (unexpected errors, 5xx): it is rethrown after the rollback.
   */
  classify(error: unknown): RecordedResponse | null;
}

/**
 * Protects the stored body of a sensitive operation (one whose answer carries a secret):
 * `seal` before it is stored, `open` before it is replayed. `open(seal(body)) === body`.
 */
export interface ResponseSealer {
  seal(body: string): string;
  open(stored: string): string;
}

/**
 * The default sealer: stores bodies as they are. With it, a sensitive answer (an API key, a
 * signing secret) is readable in the database until its key expires; deployments wire a real one.
 */
export const IDENTITY_SEALER: ResponseSealer = {
  seal: (body) => body,
  open: (stored) => stored,
};
