import { fingerprintOf } from './fingerprint';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency.errors';
import {
  NO_OP_IDEMPOTENCY_OBSERVER,
  type IdempotencyObserver,
  type IdempotencyOutcome,
} from './idempotency.observer';
import {
  IDENTITY_SEALER,
  SYSTEM_CLOCK,
  type Clock,
  type FinishedOutcome,
  type IdempotencyRecordStore,
  type OutcomeClassifier,
  type ResponseSealer,
  type TransactionRunner,
} from './idempotency-ports';
import type { FinishedRecord, IdempotencyKeyRef, RecordedResponse } from './idempotency-record';
import { decide } from './idempotency-state-machine';

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
  /** Runs the operation; called inside the key's transaction, at most once per call. */
  execute: () => Promise<TResult>;
}

/** A keyed request known by its exact bytes, before validation. */
export interface KnownRequest {
  operation: Pick<IdempotentOperation, 'operation'>;
  tenantId: string;
  key: string;
  /** SHA-256 of the request's exact bytes. */
  requestDigest: Buffer;
}

/** What to send back: status, headers and the exact body. */
export interface IdempotentAnswer extends RecordedResponse {
  outcome: Extract<IdempotencyOutcome, 'executed' | 'replayed' | 'business_rejection'>;
}

/**
 * Runs keyed calls. Token for dependency injection, and the seam where the benchmark swaps the
 * protocol for `UnkeyedExecutor`.
 */
export abstract class IdempotentExecutor {
  /**
   * The stored answer when the key finished with a request of exactly these bytes: one indexed
   * read, before the body is validated or normalized (identical bytes validate and normalize
   * identically). Null otherwise — then `execute` decides (replay, mismatch, busy, or run).
   */
  abstract findReplay(request: KnownRequest): Promise<IdempotentAnswer | null>;

  /**
   * @throws IdempotencyKeyReusedError when the key was used with another payload
   * @throws IdempotencyKeyInUseError when another request holds the key
   * @throws whatever the operation threw when it is not a business outcome (nothing is stored)
   */
  abstract execute<TResult>(call: IdempotentCall<TResult>): Promise<IdempotentAnswer>;
}

export interface IdempotencyProtocolOptions {
  /** Replay window in seconds (IDEMPOTENCY_KEY_TTL). */
  ttlSeconds: number;
  transactions: TransactionRunner;
  records: IdempotencyRecordStore;
  classifier: OutcomeClassifier;
  clock?: Clock;
  /** Default: `IDENTITY_SEALER` (stores bodies as they are). */
  sealer?: ResponseSealer;
  observer?: IdempotencyObserver;
}

/**
 * The idempotency protocol for operations that happen inside the database: claim → execute →
 * record, in one transaction.
 * 1. Claim: a finished key is answered without a lock (replay, or 422 for another payload); a
 *    key another request holds answers 409 at once; otherwise the caller holds the key.
 * 2. Execute the operation in the same transaction, then store its answer (`completed`) and
 *    commit: the effect and the record commit together or not at all.
 * 3. A business rejection (the classifier knows the error) rolls that transaction back — undoing
 *    partial writes such as a number taken before the conflict was found — and is stored as
 *    `failed_final` in a second, short transaction that claims the key again. Between the two the
 *    key is free: if another request with the key executed meanwhile, its answer is returned
 *    (this request's execution left no trace, so there was still exactly one); if it is still
 *    running, 409. Any other error rolls back and stores nothing.
 * Outcomes go to the observer once durable.
 */
export class IdempotencyProtocol extends IdempotentExecutor {
  private readonly clock: Clock;
  private readonly sealer: ResponseSealer;
  private readonly observer: IdempotencyObserver;

  constructor(private readonly options: IdempotencyProtocolOptions) {
    super();
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.sealer = options.sealer ?? IDENTITY_SEALER;
    this.observer = options.observer ?? NO_OP_IDEMPOTENCY_OBSERVER;
  }

  async findReplay(request: KnownRequest): Promise<IdempotentAnswer | null> {
    const ref = refOf(request);
    const record = await this.options.records.findFinished(ref, this.clock.now());
    if (record?.requestDigest?.equals(request.requestDigest) !== true) return null;
    this.observer.observe(ref.operation, 'replayed');
    return this.replay(record);
  }

  async execute<TResult>(call: IdempotentCall<TResult>): Promise<IdempotentAnswer> {
    const ref = refOf(call);
    const fingerprint = fingerprintOf(call.payload);
    const requestDigest = call.requestDigest ?? null;
    const sensitive = call.operation.sensitiveResponse === true;
    let answer: IdempotentAnswer;
    try {
      answer = await this.options.transactions
        .run(() =>
          this.settle(ref, fingerprint, requestDigest, sensitive, async () => ({
            state: 'completed',
            response: await this.run(call),
            outcome: 'executed',
          })),
        )
        .catch((error: unknown) => {
          if (!(error instanceof BusinessRejection)) throw error;
          // The whole transaction rolled back: the rejection is stored in a second one.
          return this.options.transactions.run(() =>
            this.settle(ref, fingerprint, requestDigest, sensitive, () =>
              Promise.resolve({
                state: 'failed_final',
                response: error.response,
                outcome: 'business_rejection',
              }),
            ),
          );
        });
    } catch (error) {
      if (error instanceof IdempotencyKeyReusedError)
        this.observer.observe(ref.operation, 'payload_mismatch');
      if (error instanceof IdempotencyKeyInUseError) this.observer.observe(ref.operation, 'in_flight');
      throw error;
    }
    // After the commit: an outcome that wrote is only reported once it is durable.
    this.observer.observe(ref.operation, answer.outcome);
    return answer;
  }

  /** Claims the key and acts on the decision; `produce` runs only when the key is new. */
  private async settle(
    ref: IdempotencyKeyRef,
    fingerprint: Buffer,
    requestDigest: Buffer | null,
    sensitive: boolean,
    produce: () => Promise<Produced>,
  ): Promise<IdempotentAnswer> {
    const now = this.clock.now();
    const decision = decide(await this.options.records.claim(ref, now), fingerprint, now);
    switch (decision.action) {
      case 'replay':
        return this.replay(decision.record);
      case 'reject_mismatch':
        throw new IdempotencyKeyReusedError();
      case 'reject_busy':
        throw new IdempotencyKeyInUseError();
      case 'resume':
        // Only operations that commit a lease before an external call leave unfinished records.
        throw new Error(
          `${ref.operation}: key holds an unfinished (${decision.record.state}) record, which a ` +
            'one-transaction operation never writes; the operation name is shared by two flows',
        );
      case 'execute': {
        const { state, response, outcome } = await produce();
        const finishedAt = this.clock.now();
        const stored: FinishedOutcome = {
          state,
          response: sensitive
            ? { ...response, body: this.sealer.seal(response.body), sealed: true }
            : { ...response, sealed: false },
          expiresAt: new Date(finishedAt.getTime() + this.options.ttlSeconds * 1000),
        };
        await this.options.records.insertFinished(ref, { ...stored, fingerprint, requestDigest }, finishedAt);
        return answerOf(response, stored.expiresAt, outcome);
      }
    }
  }

  /**
   * Runs the operation in the key's transaction. A business rejection becomes a
   * `BusinessRejection`, which rolls the transaction back; anything else propagates.
   */
  private async run<TResult>(call: IdempotentCall<TResult>): Promise<RecordedResponse> {
    let result: TResult;
    try {
      result = await call.execute();
    } catch (error) {
      const rejection = this.options.classifier.classify(error);
      throw rejection === null ? error : new BusinessRejection(rejection, error);
    }
    return successResponse(call.operation, result);
  }

  private replay(record: FinishedRecord): IdempotentAnswer {
    const { sealed, ...response } = record.response;
    const body = sealed ? this.sealer.open(response.body) : response.body;
    return answerOf({ ...response, body }, record.expiresAt, 'replayed');
  }
}

/**
 * Benchmark only (BENCHMARK_DISABLE_IDEMPOTENCY): the same operation in a plain transaction,
 * with no claim, lock or stored record, so `npm run bench` can measure what the protocol costs.
 * Never wired in a deployment.
 */
export class UnkeyedExecutor extends IdempotentExecutor {
  constructor(private readonly transactions: TransactionRunner) {
    super();
  }

  findReplay(): Promise<IdempotentAnswer | null> {
    return Promise.resolve(null);
  }

  async execute<TResult>(call: IdempotentCall<TResult>): Promise<IdempotentAnswer> {
    const result = await this.transactions.run(call.execute);
    return { ...successResponse(call.operation, result), outcome: 'executed' };
  }
}

interface Produced {
  state: FinishedOutcome['state'];
  response: RecordedResponse;
  outcome: IdempotentAnswer['outcome'];
}

/** A business outcome of the operation, carried out of its transaction so that it rolls back. */
class BusinessRejection extends Error {
  constructor(
    readonly response: RecordedResponse,
    cause: unknown,
  ) {
    super('business rejection', { cause });
  }
}

/** The answer of a successful execution: serialized once, so the replay is byte-identical. */
function successResponse<TResult>(
  operation: IdempotentOperation<TResult>,
  result: TResult,
): RecordedResponse {
  const headers: Record<string, string> = { 'Content-Type': JSON_CONTENT_TYPE };
  if (operation.location) headers.Location = operation.location(result);
  return { status: operation.status, headers, body: JSON.stringify(result) };
}

function refOf(request: Omit<KnownRequest, 'requestDigest'>): IdempotencyKeyRef {
  return { tenantId: request.tenantId, operation: request.operation.operation, key: request.key };
}

/** The recorded answer plus what the client needs to know about its key. */
function answerOf(
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
