/**
 * How an `@Idempotent` request ended, as far as the idempotency layer is concerned. Requests
 * refused before the key is looked at for other reasons (authentication, body validation) and
 * unexpected failures (5xx, rolled back) are not outcomes.
 */
export const IDEMPOTENCY_OUTCOMES = [
  /** first use: the operation ran and its response was stored with the key */
  'executed',
  /** same key, same payload: the stored response was sent again */
  'replayed',
  /** same key, different payload: `422 idempotency_key_reused` */
  'payload_mismatch',
  /** same key while another request holds it: `409 idempotency_key_in_use` */
  'in_flight',
  /** no `Idempotency-Key` header: `400 idempotency_key_missing` */
  'missing_key',
  /** an unusable header: `400 idempotency_key_invalid` */
  'invalid_key',
  /** first use, and the operation refused: the rejection was stored with the key */
  'business_rejection',
  /**
   * an operation with an external effect whose outcome is not known yet: `202`, nothing stored,
   * the key stays unfinished
   */
  'pending',
  /**
   * an unfinished operation taken over (a retry after the lease ran out, or the recovery) and
   * finished: its answer was stored with the key
   */
  'resumed',
] as const;

export type IdempotencyOutcome = (typeof IDEMPOTENCY_OUTCOMES)[number];

/** Injection token of the application's `IdempotencyObserver` (provided by `IdempotencyModule`). */
export const IDEMPOTENCY_OBSERVER = Symbol('IDEMPOTENCY_OBSERVER');

/**
 * The idempotency layer's port for metrics, so the generic lib needs no metrics library.
 * Given to `IdempotencyModule` through `IdempotencyModuleOptions.observer`; injectable anywhere
 * in the application as `IDEMPOTENCY_OBSERVER`.
 */
export interface IdempotencyObserver {
  /**
   * Called once per request with its final outcome: outcomes that write (`executed`,
   * `business_rejection`) only after their transaction committed. Runs on the request path:
   * must be cheap and must not throw.
   */
  observe(operation: string, outcome: IdempotencyOutcome): void;
  /** Called by whoever runs `purgeExpiredIdempotencyRecords`, with the count it returned. */
  purged(count: number): void;
}

/** The default: observes nothing. */
export const NO_OP_IDEMPOTENCY_OBSERVER: IdempotencyObserver = {
  observe: () => undefined,
  purged: () => undefined,
};
