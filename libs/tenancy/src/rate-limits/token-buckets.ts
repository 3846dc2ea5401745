/** What one request took from its bucket, and what the RateLimit headers say about it. */
export interface BucketDecision {
  allowed: boolean;
  /** The bucket's capacity (the burst). */
  limit: number;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again (0 when it is). */
  resetSeconds: number;
  /** Seconds until the next token, at least 1: `Retry-After` of a refusal. */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  /** Milliseconds (monotonic clock) of the last refill. */
  at: number;
}

/**
 * Token buckets in memory, one per id (a company, a client address): each holds up to `capacity`
 * tokens, refills at `ratePerSecond`, and a request takes one. Framework-free and synchronous —
 * no I/O on the request path. Bounded: past `maxBuckets`, buckets that have refilled to full
 * (the same as no bucket) are dropped, then the oldest.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly maxBuckets = 100_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  take(id: string, ratePerSecond: number, capacity: number): BucketDecision {
    const now = this.now();
    let bucket = this.buckets.get(id);
    if (bucket) {
      bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * ratePerSecond);
      bucket.at = now;
    } else {
      if (this.buckets.size >= this.maxBuckets) this.makeRoom(ratePerSecond, capacity, now);
      bucket = { tokens: capacity, at: now };
      this.buckets.set(id, bucket);
    }
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    return {
      allowed,
      limit: Math.floor(capacity),
      remaining: Math.floor(bucket.tokens),
      resetSeconds: Math.ceil((capacity - bucket.tokens) / ratePerSecond),
      retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / ratePerSecond)),
    };
  }

  get size(): number {
    return this.buckets.size;
  }

  private makeRoom(ratePerSecond: number, capacity: number, now: number): void {
    for (const [id, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * ratePerSecond >= capacity) this.buckets.delete(id);
    }
    // Map iteration order is insertion order: the first entry is the oldest.
    if (this.buckets.size >= this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value as string);
  }
}
