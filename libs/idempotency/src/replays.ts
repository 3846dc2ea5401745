import type { IdempotencyObserver } from './idempotency.observer';
import type { Clock, IdempotencyRecordStore, ResponseSealer } from './idempotency-ports';
import type { FinishedRecord, IdempotencyKeyRef } from './idempotency-record';
import { answerOf, refOf, type IdempotentAnswer, type KnownRequest } from './idempotent-executor';
import { inStoredHeaderOrder, type ReplayCache } from './replay-cache';

/**
 * The protocol's replays of finished keys (`IdempotencyProtocol`): from the process's replay cache
 * when it keeps one, else from the stored record; and what the cache keeps.
 */
export class Replays {
  constructor(
    private readonly records: IdempotencyRecordStore,
    private readonly cache: ReplayCache | undefined,
    private readonly sealer: ResponseSealer,
    private readonly observer: IdempotencyObserver,
    private readonly clock: Clock,
  ) {}

  async findReplay(request: KnownRequest): Promise<IdempotentAnswer | null> {
    if (this.cache === undefined) {
      return this.readReplay(refOf(request), request, this.clock.now());
    }
    // With a cache, a miss reads nothing: most requests carry a new key, and a retry this process
    // has not kept is answered by the claim, which reads a finished record without the lock.
    return this.findCachedReplay(request, () => true);
  }

  findCachedReplay(request: KnownRequest, admit: () => boolean): IdempotentAnswer | null {
    const ref = refOf(request);
    const kept = this.cache?.find(ref, request.requestDigest, this.clock.now());
    if (!kept || !admit()) return null;
    this.observer.observe(ref.operation, 'replayed');
    return { ...kept, outcome: 'replayed' };
  }

  holdsCachedReplay(request: Omit<KnownRequest, 'requestDigest'>): boolean {
    return this.cache?.holds(refOf(request), this.clock.now()) === true;
  }

  findStoredReplay(request: KnownRequest): Promise<IdempotentAnswer | null> {
    return this.readReplay(refOf(request), request, this.clock.now());
  }

  private async readReplay(
    ref: IdempotencyKeyRef,
    request: KnownRequest,
    now: Date,
  ): Promise<IdempotentAnswer | null> {
    const record = await this.records.findFinished(ref, now);
    if (record?.requestDigest?.equals(request.requestDigest) !== true) return null;
    this.observer.observe(ref.operation, 'replayed');
    return this.replayAndKeep(ref, record, request.operation.sensitiveResponse === true);
  }

  /** The replay of a committed record read from the database, kept for the next retry. */
  replayAndKeep(ref: IdempotencyKeyRef, record: FinishedRecord, sensitive: boolean): IdempotentAnswer {
    const answer = this.replay(record);
    // Committed, and unchanged until it expires.
    const digest = record.requestDigest;
    if (!sensitive && !record.response.sealed && digest) {
      this.cache?.remember(ref, digest, answer, record.expiresAt);
    }
    return answer;
  }

  /**
   * Keeps the replay of a key this call just finished — called once its transaction committed.
   * Only outcomes this call stored itself, so the record's request digest is the call's: a first
   * execution or a stored rejection (not a replay, a resumed operation or a pending one), and
   * never a sealed answer. Its expiry is `Idempotency-Key-Expires` (the stored one, rounded down
   * to the second: the database answers that last second).
   */
  keepFinished(
    ref: IdempotencyKeyRef,
    call: Pick<KnownRequest, 'operation'> & { requestDigest?: Buffer },
    answer: IdempotentAnswer,
  ): void {
    const cache = this.cache;
    if (cache === undefined || call.requestDigest === undefined) return;
    if (call.operation.sensitiveResponse === true) return;
    if (answer.outcome !== 'executed' && answer.outcome !== 'business_rejection') return;
    const { 'Idempotency-Key-Expires': expires, ...stored } = answer.headers;
    const expiresAt = new Date(expires);
    const replay = { status: answer.status, headers: inStoredHeaderOrder(stored), body: answer.body };
    cache.remember(ref, call.requestDigest, answerOf(replay, expiresAt, 'replayed'), expiresAt);
  }

  replay(record: FinishedRecord): IdempotentAnswer {
    const { sealed, ...response } = record.response;
    const body = sealed ? this.sealer.open(response.body) : response.body;
    return answerOf({ ...response, body }, record.expiresAt, 'replayed');
  }
}
