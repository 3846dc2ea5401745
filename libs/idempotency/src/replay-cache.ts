import type { IdempotencyKeyRef, RecordedResponse } from './idempotency-record';

/** How much a `ReplayCache` may keep; the first limit reached evicts. */
export interface ReplayCacheLimits {
  /** Most answers kept (IDEMPOTENCY_REPLAY_CACHE_SIZE); 0 keeps none. */
  maxEntries: number;
  /** Most bytes kept, as `replayCacheBytesOf` counts them (IDEMPOTENCY_REPLAY_CACHE_BYTES). */
  maxBytes: number;
}

/**
 * What one entry costs besides its characters: the Map entry, the entry, answer and headers
 * objects, the string objects, the digest. Measured on Node 24 (V8 heap growth per entry,
 * 50,000 entries, minus their characters): ~1,340 bytes; rounded up.
 */
export const REPLAY_CACHE_ENTRY_OVERHEAD_BYTES = 1536;

/**
 * The bytes an entry is counted for: every string at 2 bytes a character (V8 keeps a string at
 * 1 or 2 bytes a character, so this is an upper bound) plus `REPLAY_CACHE_ENTRY_OVERHEAD_BYTES`.
 */
export function replayCacheBytesOf(cacheKey: string, answer: RecordedResponse): number {
  let chars = cacheKey.length + answer.body.length;
  for (const [name, value] of Object.entries(answer.headers)) chars += name.length + value.length;
  return 2 * chars + REPLAY_CACHE_ENTRY_OVERHEAD_BYTES;
}

interface Entry {
  /**
   * SHA-256 of the exact request bytes that finished the key, in base64: a string in the heap.
   * Not a copy of the digest Buffer: a small Buffer is a slice of an 8 KiB pool slab shared with
   * whatever else was allocated then, and every kept slice kept its whole slab alive (measured:
   * 4,000 entries held 25 MB outside the heap, none of it counted).
   */
  requestDigest: string;
  /** Epoch ms: from then on the key is not served from here (the record's `expiresAt`). */
  expiresAtMs: number;
  /** The replay as the database path would send it (`Idempotent-Replayed` included). */
  answer: RecordedResponse;
  bytes: number;
}

/**
 * Replays of finished keys, kept in the process: a byte-identical retry of a key this process
 * finished or replayed recently is answered without a database read. Sound because a finished
 * record never changes until it expires (only expired records are deleted: the purge and the
 * claim of a key whose record expired), and because only committed records enter (the caller
 * adds an answer after its transaction committed, or after reading it from the database).
 * Least recently used first out, bounded by entries and by bytes. Not for sealed answers: the
 * caller keeps those out, so no secret sits in the heap longer than its request.
 */
export class ReplayCache {
  /** Map order is recency order: the first entry is the least recently used. */
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly limits: ReplayCacheLimits) {}

  /**
   * The stored replay for these exact bytes while the key has not expired at `now`; null when
   * the key is not here, has expired (then dropped), or finished with other bytes (then kept:
   * the caller's slower path decides between replay and mismatch).
   */
  find(ref: IdempotencyKeyRef, requestDigest: Buffer, now: Date): RecordedResponse | null {
    const cacheKey = cacheKeyOf(ref);
    const entry = this.entries.get(cacheKey);
    if (entry === undefined) return null;
    if (entry.expiresAtMs <= now.getTime()) {
      this.drop(cacheKey, entry);
      return null;
    }
    if (entry.requestDigest !== requestDigest.toString('base64')) return null;
    this.entries.delete(cacheKey);
    this.entries.set(cacheKey, entry);
    return { status: entry.answer.status, headers: { ...entry.answer.headers }, body: entry.answer.body };
  }

  /**
   * Whether an answer of this key is kept and unexpired at `now`, whatever bytes finished it:
   * without one, a request's bytes need not be read or digested to know `find` would miss.
   */
  holds(ref: IdempotencyKeyRef, now: Date): boolean {
    const entry = this.entries.get(cacheKeyOf(ref));
    return entry !== undefined && entry.expiresAtMs > now.getTime();
  }

  /**
   * Keeps the replay of a finished, committed key: `answer` exactly as a replay from the database
   * would be, `expiresAt` the record's (or earlier). An answer larger than `maxBytes` is not kept.
   */
  remember(ref: IdempotencyKeyRef, requestDigest: Buffer, answer: RecordedResponse, expiresAt: Date): void {
    const cacheKey = cacheKeyOf(ref);
    const bytes = replayCacheBytesOf(cacheKey, answer);
    if (this.limits.maxEntries === 0 || bytes > this.limits.maxBytes) return;
    const previous = this.entries.get(cacheKey);
    if (previous !== undefined) this.drop(cacheKey, previous);
    this.entries.set(cacheKey, {
      requestDigest: requestDigest.toString('base64'),
      expiresAtMs: expiresAt.getTime(),
      answer: { status: answer.status, headers: { ...answer.headers }, body: answer.body },
      bytes,
    });
    this.bytes += bytes;
    for (const [oldestKey, oldest] of this.entries) {
      if (this.entries.size <= this.limits.maxEntries && this.bytes <= this.limits.maxBytes) break;
      this.drop(oldestKey, oldest);
    }
  }

  /** Entries kept now. */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes kept now, as `replayCacheBytesOf` counts them. */
  get byteSize(): number {
    return this.bytes;
  }

  private drop(cacheKey: string, entry: Entry): void {
    this.entries.delete(cacheKey);
    this.bytes -= entry.bytes;
  }
}

/**
 * Headers in the order the record store gives stored headers back — PostgreSQL's `jsonb` keeps
 * object keys shorter first, then bytewise — so that a replay built from a first answer is sent
 * exactly as one read from the database.
 */
export function inStoredHeaderOrder(headers: Record<string, string>): Record<string, string> {
  const names = Object.keys(headers).sort(
    (a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  return Object.fromEntries(names.map((name) => [name, headers[name]]));
}

function cacheKeyOf(ref: IdempotencyKeyRef): string {
  return `${ref.tenantId}\n${ref.operation}\n${ref.key}`;
}
