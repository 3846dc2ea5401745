/** How a logical call retries its attempts. Every field has a default. */
export interface RetryOptions {
  /** Attempts per logical call, the first included. Default 5. */
  maxAttempts?: number;
  /** Backoff before retry n (0-based) is uniform in [0, min(maxDelayMs, baseDelayMs · 2^n)). Default 200. */
  baseDelayMs?: number;
  /** Default 5000. */
  maxDelayMs?: number;
  /**
   * The longest `Retry-After` the client waits for on its own; a longer one ends the call with
   * the error (its `retryAfterSeconds` says when to come back). Default 30000.
   */
  maxRetryAfterMs?: number;
}

export type ResolvedRetryOptions = Required<RetryOptions>;

export const DEFAULT_RETRY: ResolvedRetryOptions = {
  maxAttempts: 5,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 30_000,
};

/**
 * Whether an HTTP answer may be retried with the same key: an in-flight duplicate
 * (`409 idempotency_key_in_use`), rate limiting (429) and server errors (5xx). Never 4xx
 * otherwise — a 400/401/403/404 needs a fix, a 422 (e.g. `idempotency_key_reused`) is final,
 * and any other 409 is a stored business outcome that a retry would only replay.
 */
export function isRetryableStatus(status: number, code: string | undefined): boolean {
  if (status === 409) return code === 'idempotency_key_in_use';
  return status === 429 || status >= 500;
}

/** Capped exponential backoff with full jitter, for retry number `retry` (0-based). */
export function backoffDelayMs(retry: number, options: ResolvedRetryOptions, random: () => number): number {
  const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** retry);
  return Math.floor(random() * cap);
}

/** `Retry-After` as milliseconds from `now`: delay-seconds or an HTTP date; undefined when absent or invalid. */
export function parseRetryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
