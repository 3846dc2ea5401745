import { CachedReplays } from './cached-replays';
import {
  type EffectResult,
  type ExternalEffect,
  RecoveryPoints,
  type ResumeResult,
  type StalledOperation,
  type StalledOperationsQuery,
} from './external-effect';
import { fingerprintOf } from './fingerprint';
import {
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  IdempotencyLeaseLostError,
} from './idempotency.errors';
import { NO_OP_IDEMPOTENCY_OBSERVER, type IdempotencyObserver } from './idempotency.observer';
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
import type { IdempotencyKeyRef, Lease, RecordedResponse } from './idempotency-record';
import { decide, type KeyDecision } from './idempotency-state-machine';
import {
  answerOf,
  type ExternalCall,
  type IdempotentAnswer,
  type IdempotentCall,
  IdempotentExecutor,
  type IdempotentOperation,
  type KnownRequest,
  pendingAnswer,
  refOf,
  successResponse,
} from './idempotent-executor';
import { Replays } from './replays';

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
   * The replays this process keeps: `findReplay` answers from them alone (a miss reads nothing;
   * the claim replays what they do not hold). Default: none kept, `findReplay` reads the database.
   */
  cachedReplays?: CachedReplays;
}

/**
 * The idempotency protocol for operations that happen inside the database: claim → execute →
 * record, in one transaction.
 * 1. Claim, as the transaction's first statement (in one round trip with its BEGIN), before the
 *    operation runs: a finished key is answered without a lock (replay, or 422 for another
 *    payload); a key another request holds answers 409 at once; otherwise the caller holds it.
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

  private readonly cached: CachedReplays;
  private readonly replays: Replays;

  constructor(private readonly options: IdempotencyProtocolOptions) {
    super();
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.sealer = options.sealer ?? IDENTITY_SEALER;
    this.observer = options.observer ?? NO_OP_IDEMPOTENCY_OBSERVER;
    this.cached = options.cachedReplays ?? new CachedReplays(undefined, this.observer, this.clock);
    this.replays = new Replays(options.records, this.cached, this.sealer, this.observer, this.clock);
  }

  findReplay(request: KnownRequest): Promise<IdempotentAnswer | null> {
    return this.replays.findReplay(request);
  }

  findStoredReplay(request: KnownRequest): Promise<IdempotentAnswer | null> {
    return this.replays.findStoredReplay(request);
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
      answer = await this.options.transactions
        .run(() => this.claimAndRecord(ref, fingerprint, requestDigest, sensitive, produce))
        // The whole transaction rolled back: the rejection is stored in a second one.
        .catch((error: unknown) => this.storeRejection(ref, fingerprint, requestDigest, sensitive, error));
    } catch (error) {
      this.observeRefusal(ref.operation, error);
      throw error;
    }
    // After the commit: an outcome that wrote is only reported (and kept) once it is durable.
    this.observer.observe(ref.operation, answer.outcome);
    this.cached.keepFinished(ref, call, answer);
    return answer;
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
    this.cached.keepFinished(ref, call, answer);
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
        return this.replays.replay(decision.record);
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
      this.claimAndRecord(ref, fingerprint, requestDigest, sensitive, () =>
        Promise.resolve({ state: 'failed_final', response: error.response, outcome: 'business_rejection' }),
      ),
    );
  }

  /**
   * Claims the key and acts on the decision: replay, refuse, or — for a new key only — record
   * what `produce` gives as the key's final answer.
   */
  private async claimAndRecord(
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
        return this.replays.replayAndKeep(ref, decision.record, sensitive);
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
}

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
