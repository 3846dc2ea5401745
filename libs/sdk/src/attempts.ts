import { LedgerkeyApiError, LedgerkeyConnectionError } from './ledgerkey-api-error.js';
import {
  backoffDelayMs,
  isRetryableStatus,
  parseRetryAfterMs,
  type ResolvedRetryOptions,
  type RetryOptions,
} from './retry-policy.js';

/** What one attempt of the generated client returns (its "fields" response style). */
export interface AttemptResult<T> {
  data?: T;
  error?: unknown;
  response?: Response;
}

export type Attempt<T> = (signal: AbortSignal) => Promise<AttemptResult<T>>;

export interface Answer<T> {
  data: T;
  response: Response;
  attempts: number;
}

/** How a client runs the attempts of a call: its retry options and timeout, and its clock-free waits. */
export interface AttemptSettings {
  retry: ResolvedRetryOptions;
  timeoutMs: number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Uniform in [0, 1): the jitter source. */
  random: () => number;
}

/** What a call may override: the caller's signal, retry options and timeout. */
export interface AttemptOptions {
  signal?: AbortSignal;
  retry?: RetryOptions;
  timeoutMs?: number;
}

/**
 * Runs attempts until one gets a final answer.
 * @throws LedgerkeyApiError on a non-retryable error answer, or the last retryable one
 * @throws LedgerkeyConnectionError when the last attempt got no answer at all
 * @throws the signal's reason when the caller aborts
 */
export async function sendAttempts<T>(
  settings: AttemptSettings,
  options: AttemptOptions | undefined,
  attempt: Attempt<T>,
  idempotencyKey: string | undefined,
): Promise<Answer<T>> {
  const retry = { ...settings.retry, ...options?.retry };
  const timeoutMs = options?.timeoutMs ?? settings.timeoutMs;
  const callerSignal = options?.signal;
  for (let attempts = 1; ; attempts += 1) {
    callerSignal?.throwIfAborted();
    // A timer of our own, not AbortSignal.timeout(): that one's timer is Node's internal and unref'd,
    // and in a test run with other files in the same worker it was seen never to fire.
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
      timeoutMs,
    );
    const signal = callerSignal ? AbortSignal.any([callerSignal, timeout.signal]) : timeout.signal;
    let failure: LedgerkeyApiError | LedgerkeyConnectionError;
    let waitMs: number;
    try {
      const result = await attempt(signal);
      const { response } = result;
      if (response && result.error === undefined) {
        return { data: result.data as T, response, attempts };
      }
      if (response && !response.ok && isAnswerBody(result.error)) {
        const retryAfterMs = parseRetryAfterMs(response.headers.get('retry-after'));
        failure = new LedgerkeyApiError({
          status: response.status,
          problem: result.error,
          requestId: response.headers.get('x-request-id'),
          retryAfterSeconds: retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000),
          idempotencyKey,
          attempts,
        });
        if (!isRetryableStatus(failure.status, failure.code)) throw failure;
        if (retryAfterMs !== undefined && retryAfterMs > retry.maxRetryAfterMs) throw failure;
        waitMs = Math.max(retryAfterMs ?? 0, backoffDelayMs(attempts - 1, retry, settings.random));
      } else {
        // No answer, or the answer was cut off while its body was read: the outcome is unknown.
        failure = connectionFailure(result.error, idempotencyKey, attempts, timeout.signal.aborted);
        waitMs = backoffDelayMs(attempts - 1, retry, settings.random);
      }
    } catch (error) {
      if (error instanceof LedgerkeyApiError) throw error;
      failure = connectionFailure(error, idempotencyKey, attempts, timeout.signal.aborted);
      waitMs = backoffDelayMs(attempts - 1, retry, settings.random);
    } finally {
      clearTimeout(timer);
    }
    if (callerSignal?.aborted) throw callerSignal.reason;
    if (attempts >= retry.maxAttempts) throw failure;
    await settings.sleep(waitMs, callerSignal);
  }
}

/** The parsed body of an error answer: a JSON object (problem details) or text. */
function isAnswerBody(error: unknown): boolean {
  if (typeof error === 'string') return true;
  if (typeof error !== 'object' || error === null) return false;
  const prototype = Object.getPrototypeOf(error) as unknown;
  return prototype === Object.prototype || prototype === null;
}

function connectionFailure(
  cause: unknown,
  idempotencyKey: string | undefined,
  attempts: number,
  timedOut: boolean,
): LedgerkeyConnectionError {
  const reason = timedOut
    ? 'the attempt timed out'
    : `${String((cause as { message?: unknown } | undefined)?.message ?? cause)}`;
  return new LedgerkeyConnectionError(
    `no answer from the ledgerkey API: ${reason}`,
    idempotencyKey,
    attempts,
    {
      cause,
    },
  );
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
