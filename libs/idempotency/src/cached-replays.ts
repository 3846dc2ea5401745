import type { IdempotencyObserver } from './idempotency.observer';
import type { Clock } from './idempotency-ports';
import type { FinishedRecord, IdempotencyKeyRef } from './idempotency-record';
import { answerOf, refOf, type IdempotentAnswer, type KnownRequest } from './idempotent-executor';
import { inStoredHeaderOrder, type ReplayCache } from './replay-cache';

/**
 * The replays this process keeps in memory (one `ReplayCache` per process): looked up with no I/O
 * and no wait, so the API's replay front door can ask before the framework sees a request, and
 * the protocol's `findReplay` answers a kept retry without reading. The protocol keeps what it
 * finished or read here. Without a cache (IDEMPOTENCY_REPLAY_CACHE_SIZE=0) it keeps nothing and
 * finds nothing.
 */
export class CachedReplays {
  constructor(
    private readonly cache: ReplayCache | undefined,
    private readonly observer: IdempotencyObserver,
    private readonly clock: Clock,
  ) {}

  /** Whether this process keeps replays at all. */
  get enabled(): boolean {
    return this.cache !== undefined;
  }

  /**
   * Whether an unexpired answer of this key is kept, for whatever bytes: the cheap test before
   * `find`, so that a request with a new key (a create) is not read or digested for a lookup that
   * must miss.
   */
  holds(request: Omit<KnownRequest, 'requestDigest'>): boolean {
    return this.cache?.holds(refOf(request), this.clock.now()) === true;
  }

  /**
   * The kept answer when the key finished with a request of exactly these bytes. `admit` runs on
   * a hit only; a hit it refuses (e.g. a rate limit) is neither answered nor counted as a replay.
   */
  find(request: KnownRequest, admit: () => boolean = () => true): IdempotentAnswer | null {
    const ref = refOf(request);
    const kept = this.cache?.find(ref, request.requestDigest, this.clock.now());
    if (!kept || !admit()) return null;
    this.observer.observe(ref.operation, 'replayed');
    return { ...kept, outcome: 'replayed' };
  }

  /**
   * Keeps the replay of a committed record read from the database (it never changes until it
   * expires). Not a sealed answer, and not one stored without its request's digest.
   */
  keepRecord(
    ref: IdempotencyKeyRef,
    record: FinishedRecord,
    answer: IdempotentAnswer,
    sensitive: boolean,
  ): void {
    const digest = record.requestDigest;
    if (!sensitive && !record.response.sealed && digest) {
      this.cache?.remember(ref, digest, answer, record.expiresAt);
    }
  }

  /**
   * Keeps the replay of a key a call just finished — once its transaction committed. Only
   * outcomes the call stored itself, so the record's request digest is the call's: a first
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
}
