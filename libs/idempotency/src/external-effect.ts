import type { IdempotencyKeyRef } from './idempotency-record';

/**
 * An idempotent operation whose effect happens outside the database — a charge at a payment
 * provider — which no local transaction covers. Framework-free. The protocol runs it as
 *
 *   prepare (transaction 1: the key commits `in_progress` with a lease, together with the
 *            operation's own state, e.g. the payment row `processing`)
 *   → perform (no transaction: the call to the other system, bounded well within the lease)
 *   → settle  (transaction 2, fenced by the lease's attempt: the outcome's effects and the
 *            finished key with its stored answer), or, when the outcome is unknown, release the
 *            lease (`failed_retryable`) and answer `202` (not stored).
 *
 * A later request with the key, or the recovery, takes an unfinished operation over once nobody
 * holds it (`load` instead of `prepare`) and performs it again with `resumed: true`: the operation
 * must then find out whether an earlier attempt's effect happened before doing it again.
 */
export interface ExternalEffect<TState, TOutcome, TResult> {
  /** How long an attempt holds the key: longer than `perform` can take (its own timeouts) by a margin. */
  readonly leaseSeconds: number;
  /** `Retry-After` of the `202` answer: when a retry may know more. */
  readonly retryAfterSeconds: number;

  /**
   * A new key, in the transaction that commits the key `in_progress`: checks the request and
   * persists the operation's state (which `load` reads back). A business rejection thrown here
   * (an error the classifier knows) rolls everything back and is stored as the key's final answer,
   * like a local operation's; nothing is performed.
   */
  prepare(ref: IdempotencyKeyRef): Promise<TState>;

  /**
   * An unfinished key taken over, in the take-over's transaction: the state `prepare` persisted.
   * @throws Error when it is missing (a programming mistake: both commit together)
   */
  load(ref: IdempotencyKeyRef): Promise<TState>;

  /**
   * The effect, outside any transaction, once per attempt. Must end well within the lease (the
   * lease is the only thing that stops a second attempt). Says `known: false` whenever it cannot
   * be sure of the outcome (timeout, lost answer, the other system's 5xx); throwing is for
   * programming mistakes and leaves the operation to be resumed the same way.
   */
  perform(state: TState, attempt: EffectAttempt): Promise<EffectResult<TOutcome>>;

  /**
   * The known outcome, in the transaction that finishes the key (fenced: a taken-over attempt
   * never gets here): writes the outcome's effects and returns the answer's result (`201`, stored).
   */
  settle(state: TState, outcome: TOutcome): Promise<TResult>;

  /** The body of the `202` answer while the outcome is unknown (the operation's state as it is). */
  pending(state: TState): TResult;
}

export interface EffectAttempt {
  /** The fencing token: 1 on the first attempt, incremented by every take-over. */
  attempt: number;
  /** An earlier attempt may have done the effect: look before doing it again. */
  resumed: boolean;
}

/** What `perform` learned. */
export type EffectResult<TOutcome> =
  | { known: true; outcome: TOutcome }
  /** The effect may or may not have happened; `reason` is for logs (e.g. `timeout`). */
  | { known: false; reason: string };

/** How a `resume` by the recovery ended. */
export type ResumeResult<TResult = unknown> =
  /** The outcome was found or made, and the key finished with it (`value`: what settle returned). */
  | { result: 'completed'; attempt: number; value: TResult }
  /** Still unknown: the key is `failed_retryable` again (or its lease runs out). */
  | { result: 'pending'; attempt: number; reason: string }
  /** Nothing to do: someone holds the key, or it finished or changed meanwhile. */
  | { result: 'skipped' };

/** An unfinished operation nobody holds, due for the recovery. */
export interface StalledOperation {
  ref: IdempotencyKeyRef;
  state: 'in_progress' | 'failed_retryable';
  attempt: number;
  recoveryPoint: string | null;
  /** When the record was written first (the operation's start). */
  startedAt: Date;
}

/** Which stalled operations the recovery takes, and how often it tries each. */
export interface StalledOperationsQuery {
  operation: string;
  limit: number;
  /**
   * Operations whose attempt reached this are left alone: they stay unfinished and visible
   * (metrics, logs), for a client retry or a person.
   */
  maxAttempts: number;
  /**
   * Backoff between recovery attempts: the first take-over is due as soon as nobody holds the
   * key; each later one waits `min(retryBaseMs · 2^(attempt − 2), retryMaxMs)` after the previous
   * attempt released it (or its lease expired).
   */
  retryBaseMs: number;
  retryMaxMs: number;
}

/** Recovery points an external operation's record passes through (`recovery_point`). */
export const RecoveryPoints = {
  /** Prepared (the operation's state committed with the key); the effect may have been performed. */
  Prepared: 'prepared',
  /** The effect's outcome was unknown; the lease was released. */
  OutcomeUnknown: 'outcome_unknown',
  /** The effect failed unexpectedly; the lease was released. */
  EffectFailed: 'effect_failed',
  /** The outcome was known but could not be written (e.g. the database failed); released. */
  OutcomeKnown: 'outcome_known',
} as const;
