import type {
  ExternalEffect,
  ResumeResult,
  StalledOperation,
  StalledOperationsQuery,
} from './external-effect';
import type { IdempotencyOutcome } from './idempotency.observer';
import type { IdempotencyKeyRef, RecordedResponse } from './idempotency-record';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** How an idempotent operation answers; declared once, shared by its route and any other caller. */
export interface IdempotentOperation<TResult = unknown> {
  /** The operation part of the key scope, e.g. `sales.invoices.create`. */
  operation: string;
  /** Status of a successful first execution (stored and replayed). */
  status: number;
  /** The `Location` of the created resource, stored and replayed with the response. */
  location?: (result: TResult) => string;
  /**
   * The answer carries a secret (an API key, a signing secret): its stored body goes through
   * the `ResponseSealer`, so a database dump does not show it once a real sealer is wired.
   */
  sensitiveResponse?: boolean;
}

/** One keyed request, as the protocol sees it: no HTTP. */
export interface IdempotentCall<TResult> {
  operation: IdempotentOperation<TResult>;
  /** The scope's tenant (a company id, or `OPERATOR_TENANT_ID`). */
  tenantId: string;
  /** The client's key, already parsed (`parseIdempotencyKey`). */
  key: string;
  /** The normalized request; its fingerprint decides replay versus mismatch. */
  payload: unknown;
  /** SHA-256 of the request's exact bytes, when the caller has them (see `findReplay`). */
  requestDigest?: Buffer;
  /**
   * Runs the operation, inside the key's transaction, once the key's claim holds the key (the
   * claim is that transaction's first statement): it runs only for a key this request holds.
   */
  execute: () => Promise<TResult>;
}

/** One keyed request of an operation whose effect happens outside the database. */
export interface ExternalCall<TState, TOutcome, TResult> extends Omit<IdempotentCall<TResult>, 'execute'> {
  effect: ExternalEffect<TState, TOutcome, TResult>;
}

/** A keyed request known by its exact bytes, before validation. */
export interface KnownRequest {
  operation: Pick<IdempotentOperation, 'operation' | 'sensitiveResponse'>;
  tenantId: string;
  key: string;
  /** SHA-256 of the request's exact bytes. */
  requestDigest: Buffer;
}

/** What to send back: status, headers and the exact body. */
export interface IdempotentAnswer extends RecordedResponse {
  outcome: Extract<
    IdempotencyOutcome,
    'executed' | 'replayed' | 'business_rejection' | 'resumed' | 'pending'
  >;
}

/** The status of the answer while an external effect's outcome is unknown: never stored. */
export const PENDING_STATUS = 202;

/**
 * Runs keyed calls. Token for dependency injection, and the seam where the benchmark swaps the
 * protocol for `UnkeyedExecutor`.
 */
export abstract class IdempotentExecutor {
  /**
   * The stored answer when the key finished with a request of exactly these bytes, before the
   * body is validated or normalized (identical bytes validate and normalize identically): from
   * the replays this process keeps when it keeps them (a miss reads nothing), else one indexed
   * read. Null otherwise — then `execute` decides (replay, mismatch, busy, or run).
   */
  abstract findReplay(request: KnownRequest): Promise<IdempotentAnswer | null>;

  /**
   * The same answer, always read from the database: for a request whose body no longer validates
   * (a rule that changed since the key finished), so that its retry still gets the stored answer.
   */
  abstract findStoredReplay(request: KnownRequest): Promise<IdempotentAnswer | null>;

  /**
   * @throws IdempotencyKeyReusedError when the key was used with another payload
   * @throws IdempotencyKeyInUseError when another request holds the key
   * @throws whatever the operation threw when it is not a business outcome (nothing is stored)
   */
  abstract execute<TResult>(call: IdempotentCall<TResult>): Promise<IdempotentAnswer>;

  /**
   * A keyed request whose effect happens outside the database (see `ExternalEffect`): a new key
   * is prepared, performed and settled; a finished one replays; an unfinished one nobody holds is
   * taken over and resumed. The answer is the stored one (`201`, `outcome` executed, resumed or
   * replayed; or a stored business rejection), or `202` (`pending`, not stored) while the outcome
   * is unknown.
   * @throws IdempotencyKeyReusedError when the key was used with another payload
   * @throws IdempotencyKeyInUseError when another request holds the key or its lease still runs
   * @throws whatever prepare, load, perform or settle threw when it is not a business outcome
   *   (the key is then released, or its lease runs out: it is resumed later)
   */
  abstract executeExternal<TState, TOutcome, TResult>(
    call: ExternalCall<TState, TOutcome, TResult>,
  ): Promise<IdempotentAnswer>;

  /**
   * The recovery's take-over of one unfinished operation nobody holds, without a request: the
   * same resume as a retry with its key would do.
   * @throws whatever load, perform or settle threw (the key is released or its lease runs out)
   */
  abstract resume<TState, TOutcome, TResult>(
    ref: IdempotencyKeyRef,
    operation: IdempotentOperation<TResult>,
    effect: ExternalEffect<TState, TOutcome, TResult>,
  ): Promise<ResumeResult<TResult>>;

  /** Unfinished operations due for the recovery (see `StalledOperationsQuery`). */
  abstract stalledOperations(query: StalledOperationsQuery): Promise<StalledOperation[]>;
}

/**
 * `202`: the outcome is not known yet. Not stored: the key stays unfinished and a retry resumes
 * it. No `Idempotency-Key-Expires`: an unfinished key does not expire.
 */
export function pendingAnswer<TResult>(
  operation: IdempotentOperation<TResult>,
  result: TResult,
  retryAfterSeconds: number,
): IdempotentAnswer {
  const headers: Record<string, string> = { 'Content-Type': JSON_CONTENT_TYPE };
  if (operation.location) headers.Location = operation.location(result);
  headers['Retry-After'] = String(retryAfterSeconds);
  return { status: PENDING_STATUS, headers, body: JSON.stringify(result), outcome: 'pending' };
}

/** The answer of a successful execution: serialized once, so the replay is byte-identical. */
export function successResponse<TResult>(
  operation: IdempotentOperation<TResult>,
  result: TResult,
): RecordedResponse {
  const headers: Record<string, string> = { 'Content-Type': JSON_CONTENT_TYPE };
  if (operation.location) headers.Location = operation.location(result);
  return { status: operation.status, headers, body: JSON.stringify(result) };
}

export function refOf(request: Omit<KnownRequest, 'requestDigest'>): IdempotencyKeyRef {
  return { tenantId: request.tenantId, operation: request.operation.operation, key: request.key };
}

/** The recorded answer plus what the client needs to know about its key. */
export function answerOf(
  response: RecordedResponse,
  expiresAt: Date,
  outcome: IdempotentAnswer['outcome'],
): IdempotentAnswer {
  const headers: Record<string, string> = {
    ...response.headers,
    'Idempotency-Key-Expires': expiresAt.toUTCString(),
  };
  if (outcome === 'replayed') headers['Idempotent-Replayed'] = 'true';
  return { status: response.status, headers, body: response.body, outcome };
}
