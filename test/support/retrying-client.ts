import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryingClientOptions {
  /** Read before every attempt, so the client follows a server that moved (e.g. restarted on a new port). */
  baseUrl: () => string;
  /** Sent on every attempt (e.g. `Authorization`). */
  headers?: Record<string, string>;
  /** Attempts per logical operation, the first included. */
  maxAttempts?: number;
  /** One attempt is abandoned (and retried) after this long. */
  attemptTimeoutMs?: number;
  /** Backoff before retrying a network error or a 5xx: full jitter over min(max, base · 2^n). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Upper bound on a wait taken from `Retry-After`, so tests stay fast. */
  maxRetryAfterMs?: number;
}

/** What one attempt ended with: an HTTP answer, or the error that stopped it before one. */
export type AttemptOutcome = { status: number; code: string | undefined } | { error: string };

export interface OperationResult<TBody = Record<string, unknown>> {
  status: number;
  headers: Headers;
  /** The body exactly as received. */
  text: string;
  /** The parsed JSON body (not validated against TBody), or undefined when the body is not JSON. */
  body: TBody;
  replayed: boolean;
  idempotencyKey: string;
  attempts: AttemptOutcome[];
}

export class RetriesExhaustedError extends Error {
  constructor(
    readonly idempotencyKey: string,
    readonly attempts: AttemptOutcome[],
  ) {
    super(
      `gave up on idempotency key ${idempotencyKey} after ${attempts.length} attempts: ${JSON.stringify(attempts)}`,
    );
  }
}

/**
 * A test client that retries the way the requirements tell API clients to: one
 * Idempotency-Key per logical operation, reused on every attempt. It retries network errors,
 * attempt timeouts, `409 idempotency_key_in_use` (after `Retry-After`, capped) and 5xx, and
 * returns every other answer as the outcome, never retrying a 4xx such as a 422 mismatch.
 */
export class RetryingClient {
  private readonly maxAttempts: number;
  private readonly attemptTimeoutMs: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly maxRetryAfterMs: number;

  constructor(private readonly options: RetryingClientOptions) {
    this.maxAttempts = options.maxAttempts ?? 10;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 10_000;
    this.backoffBaseMs = options.backoffBaseMs ?? 50;
    this.backoffMaxMs = options.backoffMaxMs ?? 1_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 250;
  }

  /**
   * Performs one logical state-changing operation. The key is fixed before the first attempt.
   * @throws RetriesExhaustedError when no attempt produced a final answer
   */
  async post<TBody = Record<string, unknown>>(
    path: string,
    body: unknown,
    idempotencyKey: string = randomUUID(),
  ): Promise<OperationResult<TBody>> {
    const attempts: AttemptOutcome[] = [];
    const payload = JSON.stringify(body);
    for (let attempt = 0; attempt < this.maxAttempts; attempt += 1) {
      let response: Response;
      let text: string;
      try {
        response = await fetch(`${this.options.baseUrl()}${path}`, {
          method: 'POST',
          headers: {
            ...this.options.headers,
            'Content-Type': 'application/json',
            'Idempotency-Key': idempotencyKey,
          },
          body: payload,
          signal: AbortSignal.timeout(this.attemptTimeoutMs),
        });
        text = await response.text();
      } catch (error) {
        attempts.push({ error: describeError(error) });
        await sleep(this.backoff(attempt));
        continue;
      }
      const parsed = parseJson(text);
      const code = typeof parsed?.code === 'string' ? parsed.code : undefined;
      attempts.push({ status: response.status, code });
      if (response.status === 409 && code === 'idempotency_key_in_use') {
        await sleep(this.retryAfter(response.headers.get('retry-after'), attempt));
        continue;
      }
      if (response.status >= 500) {
        await sleep(this.backoff(attempt));
        continue;
      }
      return {
        status: response.status,
        headers: response.headers,
        text,
        body: parsed as TBody,
        replayed: response.headers.get('idempotent-replayed') === 'true',
        idempotencyKey,
        attempts,
      };
    }
    throw new RetriesExhaustedError(idempotencyKey, attempts);
  }

  private backoff(attempt: number): number {
    return Math.random() * Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** attempt);
  }

  private retryAfter(header: string | null, attempt: number): number {
    const seconds = header === null ? Number.NaN : Number(header);
    if (!Number.isFinite(seconds) || seconds < 0) return this.backoff(attempt);
    return Math.min(seconds * 1000, this.maxRetryAfterMs) * (0.5 + Math.random() / 2);
  }
}

function parseJson(text: string): { code?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Duck-typed: errors thrown by fetch come from another realm under Jest, so instanceof fails. */
function describeError(error: unknown): string {
  const { name, message, cause } = (error ?? {}) as {
    name?: unknown;
    message?: unknown;
    cause?: { code?: unknown };
  };
  const code = typeof cause?.code === 'string' ? ` (${cause.code})` : '';
  return `${String(name ?? 'Error')}: ${String(message ?? error)}${code}`;
}
