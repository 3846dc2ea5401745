/** Outcomes of authentication, key management and admission. Each has a stable `code`. */

export class UnauthorizedError extends Error {
  readonly code = 'unauthorized';
  constructor(detail = 'A valid API key is required: send "Authorization: Bearer <api key>".') {
    super(detail);
  }
}

/** A `read_only` key on a route that creates, changes or revokes something. */
export class ForbiddenError extends Error {
  readonly code = 'forbidden';
  constructor() {
    super('This API key is read_only: it may read, but not create, change or revoke anything.');
  }
}

/**
 * The company (or, before its key is known, the client address) has used up its requests for
 * the moment. Raised before anything runs: nothing is stored, the same Idempotency-Key may be
 * retried after `retryAfterSeconds`.
 */
export class RateLimitedError extends Error {
  readonly code = 'rate_limited';
  constructor(readonly retryAfterSeconds: number) {
    super(`Too many requests; retry after ${retryAfterSeconds} s.`);
  }
}

export class ApiKeyNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(apiKeyId: string) {
    super(`No API key ${apiKeyId} exists.`);
  }
}

/**
 * Revoking this key would leave the company without an active `read_write` key, and so without
 * a way to create one through the API. Create the replacement first (or rotate the key).
 */
export class LastReadWriteKeyError extends Error {
  readonly code = 'last_read_write_key';
  constructor(apiKeyId: string) {
    super(
      `API key ${apiKeyId} is the company's last active read_write key: create another read_write ` +
        'key first, then revoke this one.',
    );
  }
}
