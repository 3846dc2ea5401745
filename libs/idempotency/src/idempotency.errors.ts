/** Errors of the idempotency layer. Each has a stable `code` that the API maps to HTTP. */

export class IdempotencyKeyMissingError extends Error {
  readonly code = 'idempotency_key_missing';
  constructor() {
    super('The Idempotency-Key header is required for this operation.');
  }
}

export class IdempotencyKeyInvalidError extends Error {
  readonly code = 'idempotency_key_invalid';
  constructor(reason: string) {
    super(`The Idempotency-Key header is invalid: ${reason}`);
  }
}

export class IdempotencyKeyReusedError extends Error {
  readonly code = 'idempotency_key_reused';
  constructor() {
    super('Idempotency-Key was already used with a different request payload.');
  }
}

export class IdempotencyKeyInUseError extends Error {
  readonly code = 'idempotency_key_in_use';
  /** Seconds a client should wait before retrying (the `Retry-After` header). */
  readonly retryAfterSeconds = 1;
  constructor(options?: { cause?: unknown }) {
    super('A request with this Idempotency-Key is still being processed, retry shortly.', options);
  }
}
