import type { CachedReplays } from './cached-replays';
import type { IdempotencyObserver } from './idempotency.observer';
import type { Clock, IdempotencyRecordStore, ResponseSealer } from './idempotency-ports';
import type { FinishedRecord, IdempotencyKeyRef } from './idempotency-record';
import { answerOf, refOf, type IdempotentAnswer, type KnownRequest } from './idempotent-executor';

/**
 * The protocol's replays of finished keys (`IdempotencyProtocol`): from the process's kept replays
 * when it keeps them, else from the stored record, which is then kept.
 */
export class Replays {
  constructor(
    private readonly records: IdempotencyRecordStore,
    private readonly cached: CachedReplays,
    private readonly sealer: ResponseSealer,
    private readonly observer: IdempotencyObserver,
    private readonly clock: Clock,
  ) {}

  /** See `IdempotentExecutor.findReplay`. */
  findReplay(request: KnownRequest): Promise<IdempotentAnswer | null> {
    // With a cache, a miss reads nothing: most requests carry a new key, and a retry this process
    // has not kept is answered by the claim, which reads a finished record without the lock.
    if (this.cached.enabled) return Promise.resolve(this.cached.find(request));
    return this.findStoredReplay(request);
  }

  /** See `IdempotentExecutor.findStoredReplay`. */
  async findStoredReplay(request: KnownRequest): Promise<IdempotentAnswer | null> {
    const ref = refOf(request);
    const record = await this.records.findFinished(ref, this.clock.now());
    if (record?.requestDigest?.equals(request.requestDigest) !== true) return null;
    this.observer.observe(ref.operation, 'replayed');
    return this.replayAndKeep(ref, record, request.operation.sensitiveResponse === true);
  }

  /** The replay of a committed record read from the database, kept for the next retry. */
  replayAndKeep(ref: IdempotencyKeyRef, record: FinishedRecord, sensitive: boolean): IdempotentAnswer {
    const answer = this.replay(record);
    this.cached.keepRecord(ref, record, answer, sensitive);
    return answer;
  }

  /** The answer a finished record replays (its sealed body opened). */
  replay(record: FinishedRecord): IdempotentAnswer {
    const { sealed, ...response } = record.response;
    const body = sealed ? this.sealer.open(response.body) : response.body;
    return answerOf({ ...response, body }, record.expiresAt, 'replayed');
  }
}
