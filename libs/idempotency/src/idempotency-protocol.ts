import type {
  EffectResult,
  ExternalEffect,
  ResumeResult,
  StalledOperation,
  StalledOperationsQuery,
} from './external-effect';
import { fingerprintOf } from './fingerprint';
import {
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  IdempotencyLeaseLostError,
} from './idempotency.errors';
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
  type NewKeyClaim,
  type OutcomeClassifier,
  type ResponseSealer,
  type TransactionRunner,
} from './idempotency-ports';
import type { FinishedRecord, IdempotencyKeyRef, Lease, RecordedResponse } from './idempotency-record';
import { decide, type KeyDecision } from './idempotency-state-machine';
import { inStoredHeaderOrder, type ReplayCache } from './replay-cache';

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
   * Runs the operation, inside the key's transaction. The key's claim goes with its first
   * statement: when the key is not new that statement fails and nothing of this run counts, and
   * should the key's holder give up meanwhile it runs once more. So what it does before its first
   * statement must not reach outside the transaction; one run at most commits.
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
   * the process's replay cache when it keeps one (a miss reads nothing), else one indexed read.
   * Null otherwise — then `execute` decides (replay, mismatch, busy, or run).
   */
  abstract findReplay(request: KnownRequest): Promise<IdempotentAnswer | null>;

  /**
   * `findReplay` from the process's replay cache alone, without waiting: for a caller that answers
   * before the framework's pipeline runs (the API's replay front door). `admit` runs on a hit only,
   * and a hit it refuses (e.g. a rate limit) is not answered nor counted as a replay. Null on a
   * miss, a refusal, or without a cache: nothing was read, nothing is owed.
   */
  abstract findCachedReplay(request: KnownRequest, admit: () => boolean): IdempotentAnswer | null;

  /**
   * Whether the replay cache holds an unexpired answer of this key, for whatever bytes: the cheap
   * test before `findCachedReplay`, so that a request with a new key (a create) is not read or
   * digested for a lookup that must miss. False without a cache.
   */
  abstract holdsCachedReplay(request: Omit<KnownRequest, 'requestDigest'>): boolean;

  /**
   * `findReplay` from the database: for a request whose body no longer validates (a rule that
   * changed since the key finished), so that its retry still gets the stored answer.
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
  /**
   * Replays kept in the process: `findReplay` answers from it alone (a miss reads nothing; the
   * claim replays what it has not kept). Default: none, `findReplay` reads the database.
   */
  replayCache?: ReplayCache;
}

/**
 * The idempotency protocol for operations that happen inside the database: claim → execute →
 * record, in one transaction.
 * 0. A new key (nearly every request) is claimed with the operation's first statement
 *    (`executeNewKey`); a key that is not new rolls that back and takes the steps below.
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
 * Operations with an effect outside the database (`executeExternal`, `resume`) commit the key
 * `in_progress` with a lease first, perform the effect outside any transaction, and finish the key
 * with the outcome's effects in a second transaction fenced by the lease's attempt (see
 * `ExternalEffect`). Outcomes go to the observer once durable.
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
    if (this.options.replayCache === undefined) {
      return this.readReplay(refOf(request), request, this.clock.now());
    }
    // With a cache, a miss reads nothing: most requests carry a new key, and a retry this process
    // has not kept is answered by the claim, which reads a finished record without the lock.
    return this.findCachedReplay(request, () => true);
  }

  findCachedReplay(request: KnownRequest, admit: () => boolean): IdempotentAnswer | null {
    const ref = refOf(request);
    const kept = this.options.replayCache?.find(ref, request.requestDigest, this.clock.now());
    if (!kept || !admit()) return null;
    this.observer.observe(ref.operation, 'replayed');
    return { ...kept, outcome: 'replayed' };
  }

  holdsCachedReplay(request: Omit<KnownRequest, 'requestDigest'>): boolean {
    return this.options.replayCache?.holds(refOf(request), this.clock.now()) === true;
  }

  findStoredReplay(request: KnownRequest): Promise<IdempotentAnswer | null> {
    return this.readReplay(refOf(request), request, this.clock.now());
  }

  private async readReplay(
    ref: IdempotencyKeyRef,
    request: KnownRequest,
    now: Date,
  ): Promise<IdempotentAnswer | null> {
    const record = await this.options.records.findFinished(ref, now);
    if (record?.requestDigest?.equals(request.requestDigest) !== true) return null;
    this.observer.observe(ref.operation, 'replayed');
    return this.replayAndKeep(ref, record, request.operation.sensitiveResponse === true);
  }

  /** The replay of a committed record read from the database, kept for the next retry. */
  private replayAndKeep(
    ref: IdempotencyKeyRef,
    record: FinishedRecord,
    sensitive: boolean,
  ): IdempotentAnswer {
    const answer = this.replay(record);
    // Committed, and unchanged until it expires.
    const digest = record.requestDigest;
    if (!sensitive && !record.response.sealed && digest) {
      this.options.replayCache?.remember(ref, digest, answer, record.expiresAt);
    }
    return answer;
  }

  async execute<TResult>(call: IdempotentCall<TResult>): Promise<IdempotentAnswer> {
    const ref = refOf(call);
    const fingerprint = fingerprintOf(call.payload);
    const requestDigest = call.requestDigest ?? null;
    const sensitive = call.operation.sensitiveResponse === true;
    let answer: IdempotentAnswer;
    try {
      const produce = async (): Promise<Produced> => ({
        state: 'completed',
        response: await this.run(call),
        outcome: 'executed',
      });
      answer =
        (await this.executeNewKey(ref, fingerprint, requestDigest, sensitive, produce)) ??
        (await this.options.transactions
          .run(() => this.settle(ref, fingerprint, requestDigest, sensitive, produce))
          // The whole transaction rolled back: the rejection is stored in a second one.
          .catch((error: unknown) => this.storeRejection(ref, fingerprint, requestDigest, sensitive, error)));
    } catch (error) {
      this.observeRefusal(ref.operation, error);
      throw error;
    }
    // After the commit: an outcome that wrote is only reported (and kept) once it is durable.
    this.observer.observe(ref.operation, answer.outcome);
    this.keepFinished(ref, call, answer);
    return answer;
  }

  /**
   * `execute` for the common case, a new key, in one round trip less: the claim goes in front of
   * the operation's first statement (`IdempotencyRecordStore.claimNew`), then as in `settle`'s
   * `execute`. Decisions stay the claim's: whenever the claim did not hold the key, nothing the
   * operation did counts, and the answer is what the usual claim-first path gives.
   * - The key was not new: the operation's first statement was skipped and the transaction rolled
   *   back; null, and the claim-first path runs (replay, 422, 409; or the operation, if the key's
   *   holder rolled back meanwhile).
   * - The operation failed before any statement took the claim along: as if the claim had come
   *   first — a business rejection is stored by `storeRejection` (which claims), and any other
   *   error goes through `settle`'s decision (a finished key still replays, a busy one is 409).
   * A store that cannot send the claim ahead (no pipelining connection) claims first, in the same
   * transaction: the claim-first path, without a transaction of its own for nothing.
   */
  private async executeNewKey(
    ref: IdempotencyKeyRef,
    fingerprint: Buffer,
    requestDigest: Buffer | null,
    sensitive: boolean,
    produce: () => Promise<Produced>,
  ): Promise<IdempotentAnswer | null> {
    let claim: NewKeyClaim | null = null;
    try {
      return await this.options.transactions.run(async () => {
        claim = this.options.records.claimNew?.(ref, this.clock.now()) ?? null;
        if (claim === null) return this.settle(ref, fingerprint, requestDigest, sensitive, produce);
        const { state, response, outcome } = await produce();
        const finishedAt = this.clock.now();
        const stored = this.storedOutcome(state, response, sensitive, finishedAt);
        // Its statement carries the claim along when the operation sent none.
        await this.options.records.insertFinished(ref, { ...stored, fingerprint, requestDigest }, finishedAt);
        return answerOf(response, stored.expiresAt, outcome);
      });
    } catch (error) {
      const { state, error: claimError } = (claim as NewKeyClaim | null) ?? { state: 'held' };
      switch (state) {
        case 'not_new':
          return null;
        case 'failed':
          throw claimError;
        case 'unsent':
          if (error instanceof BusinessRejection) break;
          return this.options.transactions.run(() =>
            this.settle(ref, fingerprint, requestDigest, sensitive, () => Promise.reject(error)),
          );
        case 'held':
          break;
      }
      return this.storeRejection(ref, fingerprint, requestDigest, sensitive, error);
    }
  }

  async executeExternal<TState, TOutcome, TResult>(
    call: ExternalCall<TState, TOutcome, TResult>,
  ): Promise<IdempotentAnswer> {
    const ref = refOf(call);
    const fingerprint = fingerprintOf(call.payload);
    const requestDigest = call.requestDigest ?? null;
    const sensitive = call.operation.sensitiveResponse === true;
    const { effect } = call;
    let started: Started<TState> | IdempotentAnswer;
    try {
      started = await this.options.transactions
        .run(() => this.start(ref, fingerprint, requestDigest, effect))
        // prepare refused: everything rolled back, nothing was performed; stored like a local
        // operation's rejection. A rival that began meanwhile holds a lease: busy.
        .catch((error: unknown) => this.storeRejection(ref, fingerprint, requestDigest, sensitive, error));
    } catch (error) {
      this.observeRefusal(ref.operation, error);
      throw error;
    }
    let answer: IdempotentAnswer;
    try {
      answer = isAnswer(started) ? started : await this.proceed(ref, call.operation, effect, started);
    } catch (error) {
      // A take-over overtook this attempt: 409, as for any request that finds the key held.
      this.observeRefusal(ref.operation, error);
      throw error;
    }
    this.observer.observe(ref.operation, answer.outcome);
    this.keepFinished(ref, call, answer);
    return answer;
  }

  async resume<TState, TOutcome, TResult>(
    ref: IdempotencyKeyRef,
    operation: IdempotentOperation<TResult>,
    effect: ExternalEffect<TState, TOutcome, TResult>,
  ): Promise<ResumeResult<TResult>> {
    let started: Started<TState> | null;
    try {
      started = await this.options.transactions.run(async (): Promise<Started<TState> | null> => {
        const now = this.clock.now();
        const claim = await this.options.records.claim(ref, now);
        // The recovery resumes whatever payload the key holds: its own fingerprint decides nothing.
        const decision = claim.record ? decide(claim, claim.record.fingerprint, now) : null;
        if (decision?.action !== 'resume') return null;
        return this.takeOver(ref, decision, effect, now);
      });
    } catch (error) {
      // Someone else took it over between the claim and the take-over.
      if (error instanceof IdempotencyKeyInUseError) return { result: 'skipped' };
      throw error;
    }
    if (started === null) return { result: 'skipped' };
    let answer: IdempotentAnswer;
    try {
      answer = await this.proceed(ref, operation, effect, started);
    } catch (error) {
      if (error instanceof IdempotencyKeyInUseError) return { result: 'skipped' };
      throw error;
    }
    this.observer.observe(ref.operation, answer.outcome);
    return started.settled === undefined
      ? { result: 'pending', attempt: started.lease.attempt, reason: started.unknownReason ?? 'unknown' }
      : { result: 'completed', attempt: started.lease.attempt, value: started.settled.value as TResult };
  }

  stalledOperations(query: StalledOperationsQuery): Promise<StalledOperation[]> {
    return this.options.records.findStalled(query, this.clock.now());
  }

  /**
   * Transaction 1 of an external operation: claim; a new key commits `in_progress` with its lease
   * together with what `prepare` wrote; an unfinished one nobody holds is taken over.
   */
  private async start<TState>(
    ref: IdempotencyKeyRef,
    fingerprint: Buffer,
    requestDigest: Buffer | null,
    effect: ExternalEffect<TState, unknown, unknown>,
  ): Promise<Started<TState> | IdempotentAnswer> {
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
        return this.takeOver(ref, decision, effect, now);
      case 'execute': {
        // The record first: a new row under the key's lock, contended by nobody.
        const lease = await this.options.records.begin(
          ref,
          {
            fingerprint,
            requestDigest,
            leaseExpiresAt: leaseUntil(now, effect.leaseSeconds),
            recoveryPoint: RecoveryPoints.Prepared,
            expiresAt: new Date(now.getTime() + this.options.ttlSeconds * 1000),
          },
          now,
        );
        const state = await this.classified(() => effect.prepare(ref));
        return { state, lease, resumed: false };
      }
    }
  }

  /** Takes an unfinished key over (attempt + 1) and loads the operation's state. */
  private async takeOver<TState>(
    ref: IdempotencyKeyRef,
    decision: Extract<KeyDecision, { action: 'resume' }>,
    effect: ExternalEffect<TState, unknown, unknown>,
    now: Date,
  ): Promise<Started<TState>> {
    const lease = await this.options.records.takeOver(
      ref,
      decision.record,
      leaseUntil(now, effect.leaseSeconds),
      now,
    );
    if (lease === null) throw new IdempotencyKeyInUseError();
    return { state: await effect.load(ref), lease, resumed: true };
  }

  /**
   * The effect, outside any transaction, then transaction 2: the known outcome settles and
   * finishes the key (fenced by the lease's attempt); an unknown one releases the lease and
   * answers 202. A failure releases the lease too, and propagates.
   */
  private async proceed<TState, TOutcome, TResult>(
    ref: IdempotencyKeyRef,
    operation: IdempotentOperation<TResult>,
    effect: ExternalEffect<TState, TOutcome, TResult>,
    started: Started<TState>,
  ): Promise<IdempotentAnswer> {
    const { state, lease, resumed } = started;
    let result: EffectResult<TOutcome>;
    try {
      result = await effect.perform(state, { attempt: lease.attempt, resumed });
    } catch (error) {
      await this.release(ref, lease, RecoveryPoints.EffectFailed);
      throw error;
    }
    if (!result.known) {
      started.unknownReason = result.reason;
      await this.release(ref, lease, RecoveryPoints.OutcomeUnknown);
      return pendingAnswer(operation, effect.pending(state), effect.retryAfterSeconds);
    }
    const sensitive = operation.sensitiveResponse === true;
    try {
      return await this.options.transactions.run(async () => {
        // Fencing first: an attempt that was taken over stops before writing anything.
        await this.options.records.hold(ref, lease);
        const value = await effect.settle(state, result.outcome);
        const response = successResponse(operation, value);
        const finishedAt = this.clock.now();
        const stored = this.storedOutcome('completed', response, sensitive, finishedAt);
        await this.options.records.finish(ref, lease, stored, finishedAt);
        started.settled = { value };
        return answerOf(response, stored.expiresAt, resumed ? 'resumed' : 'executed');
      });
    } catch (error) {
      // Another attempt owns the key now and decides the outcome; a retry gets its answer.
      if (error instanceof IdempotencyLeaseLostError) throw new IdempotencyKeyInUseError({ cause: error });
      await this.release(ref, lease, RecoveryPoints.OutcomeKnown);
      throw error;
    }
  }

  /**
   * Releases the lease (`failed_retryable`), so the next retry or the recovery resumes at once.
   * Best effort: when it cannot be written (the database is away, or the lease was already taken
   * over), the lease simply runs out.
   */
  private async release(ref: IdempotencyKeyRef, lease: Lease, recoveryPoint: string): Promise<void> {
    try {
      await this.options.transactions.run(() =>
        this.options.records.failRetryable(ref, lease, recoveryPoint, this.clock.now()),
      );
    } catch {
      // The lease expires on its own; nothing else depends on this write.
    }
  }

  /**
   * Keeps the replay of a key this call just finished — called once its transaction committed.
   * Only outcomes this call stored itself, so the record's request digest is the call's: a first
   * execution or a stored rejection (not a replay, a resumed operation or a pending one), and
   * never a sealed answer. Its expiry is `Idempotency-Key-Expires` (the stored one, rounded down
   * to the second: the database answers that last second).
   */
  private keepFinished(
    ref: IdempotencyKeyRef,
    call: Pick<KnownRequest, 'operation'> & { requestDigest?: Buffer },
    answer: IdempotentAnswer,
  ): void {
    const cache = this.options.replayCache;
    if (cache === undefined || call.requestDigest === undefined) return;
    if (call.operation.sensitiveResponse === true) return;
    if (answer.outcome !== 'executed' && answer.outcome !== 'business_rejection') return;
    const { 'Idempotency-Key-Expires': expires, ...stored } = answer.headers;
    const expiresAt = new Date(expires);
    const replay = { status: answer.status, headers: inStoredHeaderOrder(stored), body: answer.body };
    cache.remember(ref, call.requestDigest, answerOf(replay, expiresAt, 'replayed'), expiresAt);
  }

  private observeRefusal(operation: string, error: unknown): void {
    if (error instanceof IdempotencyKeyReusedError) this.observer.observe(operation, 'payload_mismatch');
    if (error instanceof IdempotencyKeyInUseError) this.observer.observe(operation, 'in_flight');
  }

  private storedOutcome(
    state: FinishedOutcome['state'],
    response: RecordedResponse,
    sensitive: boolean,
    finishedAt: Date,
  ): FinishedOutcome {
    return {
      state,
      response: sensitive
        ? { ...response, body: this.sealer.seal(response.body), sealed: true }
        : { ...response, sealed: false },
      expiresAt: new Date(finishedAt.getTime() + this.options.ttlSeconds * 1000),
    };
  }

  /** Claims the key and acts on the decision; `produce` runs only when the key is new. */
  /**
   * Stores a business rejection as the key's final answer, in a transaction of its own (the one
   * that raised it rolled back). Anything else is rethrown.
   */
  private storeRejection(
    ref: IdempotencyKeyRef,
    fingerprint: Buffer,
    requestDigest: Buffer | null,
    sensitive: boolean,
    error: unknown,
  ): Promise<IdempotentAnswer> {
    if (!(error instanceof BusinessRejection)) throw error;
    return this.options.transactions.run(() =>
      this.settle(ref, fingerprint, requestDigest, sensitive, () =>
        Promise.resolve({ state: 'failed_final', response: error.response, outcome: 'business_rejection' }),
      ),
    );
  }

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
        // A retry this process has not kept (or with other bytes of the same payload).
        return this.replayAndKeep(ref, decision.record, sensitive);
      case 'reject_mismatch':
        throw new IdempotencyKeyReusedError();
      case 'reject_busy':
        throw new IdempotencyKeyInUseError();
      case 'resume':
        // An operation with an external effect began under this key meanwhile (its rejection is
        // being stored here), or a one-transaction operation shares its name with one: either way
        // another flow owns the key.
        throw new IdempotencyKeyInUseError();
      case 'execute': {
        const { state, response, outcome } = await produce();
        const finishedAt = this.clock.now();
        const stored = this.storedOutcome(state, response, sensitive, finishedAt);
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
    return successResponse(call.operation, await this.classified(call.execute));
  }

  /** Runs `work`; a business rejection it throws becomes a `BusinessRejection`. */
  private async classified<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      const rejection = this.options.classifier.classify(error);
      throw rejection === null ? error : new BusinessRejection(rejection, error);
    }
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
 * Never wired in a deployment: the variable is refused at boot unless NODE_ENV=test.
 */
export class UnkeyedExecutor extends IdempotentExecutor {
  constructor(private readonly transactions: TransactionRunner) {
    super();
  }

  findReplay(): Promise<IdempotentAnswer | null> {
    return Promise.resolve(null);
  }

  findCachedReplay(): IdempotentAnswer | null {
    return null;
  }

  holdsCachedReplay(): boolean {
    return false;
  }

  findStoredReplay(): Promise<IdempotentAnswer | null> {
    return Promise.resolve(null);
  }

  async execute<TResult>(call: IdempotentCall<TResult>): Promise<IdempotentAnswer> {
    const result = await this.transactions.run(call.execute);
    return { ...successResponse(call.operation, result), outcome: 'executed' };
  }

  async executeExternal<TState, TOutcome, TResult>(
    call: ExternalCall<TState, TOutcome, TResult>,
  ): Promise<IdempotentAnswer> {
    const { effect } = call;
    const ref = refOf(call);
    const state = await this.transactions.run(() => effect.prepare(ref));
    const result = await effect.perform(state, { attempt: 1, resumed: false });
    if (!result.known) return pendingAnswer(call.operation, effect.pending(state), effect.retryAfterSeconds);
    const settled = await this.transactions.run(() => effect.settle(state, result.outcome));
    return { ...successResponse(call.operation, settled), outcome: 'executed' };
  }

  resume<TResult>(): Promise<ResumeResult<TResult>> {
    return Promise.resolve({ result: 'skipped' });
  }

  stalledOperations(): Promise<StalledOperation[]> {
    return Promise.resolve([]);
  }
}

/** Recovery points an external operation's record passes through (`recovery_point`). */
export const RecoveryPoints = {
  /** Prepared (the operation's state committed with the key); the effect may have been performed. */
  Prepared: 'prepared',
  /** The effect's outcome was unknown; the lease was released. */
  OutcomeUnknown: 'outcome_unknown',
  /** The effect failed unexpectedly; the lease was released. */
  EffectFailed: 'effect_failed',
  /** The outcome was known but could not be written (e.g. the database failed); released. */
  OutcomeKnown: 'outcome_known',
} as const;

/** An external operation whose attempt holds the key, between transaction 1 and its effect. */
interface Started<TState> {
  state: TState;
  lease: Lease;
  resumed: boolean;
  /** Set by `proceed` when the effect's outcome was unknown (for the recovery's report). */
  unknownReason?: string;
  /** Set by `proceed` once the outcome committed: what settle returned. */
  settled?: { value: unknown };
}

function isAnswer<TState>(value: Started<TState> | IdempotentAnswer): value is IdempotentAnswer {
  return 'outcome' in value;
}

function leaseUntil(now: Date, leaseSeconds: number): Date {
  return new Date(now.getTime() + leaseSeconds * 1000);
}

/**
 * `202`: the outcome is not known yet. Not stored: the key stays unfinished and a retry resumes
 * it. No `Idempotency-Key-Expires`: an unfinished key does not expire.
 */
function pendingAnswer<TResult>(
  operation: IdempotentOperation<TResult>,
  result: TResult,
  retryAfterSeconds: number,
): IdempotentAnswer {
  const headers: Record<string, string> = { 'Content-Type': JSON_CONTENT_TYPE };
  if (operation.location) headers.Location = operation.location(result);
  headers['Retry-After'] = String(retryAfterSeconds);
  return { status: PENDING_STATUS, headers, body: JSON.stringify(result), outcome: 'pending' };
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
