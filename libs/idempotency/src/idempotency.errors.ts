/**
 * Errors of the idempotency layer. Each has a stable `code` that the API maps to HTTP;
 * `instanceof IdempotencyError` tells them from every other error.
 */
export abstract class IdempotencyError extends Error {
  abstract readonly code: string;
}

export class IdempotencyKeyMissingError extends IdempotencyError {
  readonly code = 'idempotency_key_missing';
  constructor() {
    super('The Idempotency-Key header is required for this operation.');
  }
}

export class IdempotencyKeyInvalidError extends IdempotencyError {
  readonly code = 'idempotency_key_invalid';
  constructor(reason: string) {
    super(`The Idempotency-Key header is invalid: ${reason}`);
  }
}

export class IdempotencyKeyReusedError extends IdempotencyError {
  readonly code = 'idempotency_key_reused';
  constructor() {
    super('Idempotency-Key was already used with a different request payload.');
  }
}

export class IdempotencyKeyInUseError extends IdempotencyError {
  readonly code = 'idempotency_key_in_use';
  /** Seconds a client should wait before retrying (the `Retry-After` header). */
  readonly retryAfterSeconds = 1;
  constructor(options?: { cause?: unknown }) {
    super('A request with this Idempotency-Key is still being processed, retry shortly.', options);
  }
}

/**
 * A transition named an attempt that no longer owns the key: its lease expired and another
 * request or the recovery took the operation over (or finished it). The holder must stop
 * without writing its outcome; the new owner decides.
 */
export class IdempotencyLeaseLostError extends IdempotencyError {
  readonly code = 'idempotency_lease_lost';
  constructor(
    readonly operation: string,
    readonly attempt: number,
  ) {
    super(`Attempt ${attempt} of ${operation} no longer holds its idempotency key.`);
  }
}
