import type { ProblemCode, ProblemDetails } from './generated/types.gen.js';

/**
 * The API answered with an error (RFC 9457 problem details). Branch on `code`, which is
 * stable; `status` is the HTTP status. `idempotencyKey` is set for a `create` call: retrying
 * later with the same key (and body) is safe unless `code` is `idempotency_key_reused`.
 */
export class LedgerkeyApiError extends Error {
  override readonly name = 'LedgerkeyApiError';
  readonly status: number;
  /** The problem's `code` (e.g. `order_already_invoiced`); `unknown_error` when the body had none. */
  readonly code: ProblemCode | 'unknown_error';
  readonly detail: string;
  readonly requestId: string | undefined;
  /** The problem body as received (with extension fields such as `existingInvoiceId`). */
  readonly problem: Partial<ProblemDetails> & Record<string, unknown>;
  /** Seconds from a `Retry-After` header, when the answer carried one. */
  readonly retryAfterSeconds: number | undefined;
  readonly idempotencyKey: string | undefined;
  /** How many attempts the call made before giving up with this answer. */
  readonly attempts: number;

  constructor(options: {
    status: number;
    problem: unknown;
    requestId?: string | null;
    retryAfterSeconds?: number;
    idempotencyKey?: string;
    attempts: number;
  }) {
    const problem = (
      typeof options.problem === 'object' && options.problem !== null ? options.problem : {}
    ) as LedgerkeyApiError['problem'];
    const code = typeof problem.code === 'string' ? problem.code : 'unknown_error';
    const detail =
      typeof problem.detail === 'string'
        ? problem.detail
        : typeof options.problem === 'string' && options.problem !== ''
          ? options.problem.slice(0, 500)
          : `HTTP ${options.status}`;
    super(`${options.status} ${code}: ${detail}`);
    this.status = options.status;
    this.code = code;
    this.detail = detail;
    this.requestId =
      typeof problem.requestId === 'string' ? problem.requestId : (options.requestId ?? undefined);
    this.problem = problem;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.idempotencyKey = options.idempotencyKey;
    this.attempts = options.attempts;
  }
}

/**
 * No attempt got an answer: connection refused or reset, response lost, or every attempt
 * timed out. The outcome is unknown; retry later with the same `idempotencyKey` to find out
 * (a completed operation is replayed, never repeated).
 */
export class LedgerkeyConnectionError extends Error {
  override readonly name = 'LedgerkeyConnectionError';

  constructor(
    message: string,
    readonly idempotencyKey: string | undefined,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
