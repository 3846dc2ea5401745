import { TokenBuckets } from './token-buckets';

function clock() {
  let ms = 1_000;
  return { now: () => ms, advance: (by: number) => (ms += by) };
}

describe('TokenBuckets', () => {
  it('allows a burst of `capacity`, then refuses with Retry-After until a token has refilled', () => {
    const time = clock();
    const buckets = new TokenBuckets(10, time.now);

    const burst = Array.from({ length: 4 }, () => buckets.take('company-a', 2, 4));
    const refused = buckets.take('company-a', 2, 4);

    expect(burst.map((decision) => decision.allowed)).toEqual([true, true, true, true]);
    expect(burst.map((decision) => decision.remaining)).toEqual([3, 2, 1, 0]);
    expect(refused).toEqual({
      allowed: false,
      limit: 4,
      remaining: 0,
      resetSeconds: 2,
      retryAfterSeconds: 1,
    });
    time.advance(499);
    expect(buckets.take('company-a', 2, 4).allowed).toBe(false);
    time.advance(1);
    expect(buckets.take('company-a', 2, 4)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('keeps one bucket per id: one company using up its tokens leaves another untouched', () => {
    const buckets = new TokenBuckets(10, clock().now);
    for (let i = 0; i < 3; i += 1) buckets.take('a', 1, 3);
    expect(buckets.take('a', 1, 3).allowed).toBe(false);
    expect(buckets.take('b', 1, 3)).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('refills at the rate up to the capacity, never beyond', () => {
    const time = clock();
    const buckets = new TokenBuckets(10, time.now);
    buckets.take('a', 10, 20);
    time.advance(60_000);
    expect(buckets.take('a', 10, 20)).toMatchObject({ remaining: 19, resetSeconds: 1 });
  });

  it('a refusal waits at least one second, however fast the refill', () => {
    const buckets = new TokenBuckets(10, clock().now);
    buckets.take('a', 1000, 1);
    expect(buckets.take('a', 1000, 1)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
  });

  it('stays bounded: full buckets are dropped first, then the oldest', () => {
    const time = clock();
    const buckets = new TokenBuckets(3, time.now);
    buckets.take('drained', 1, 1);
    buckets.take('x', 1, 1);
    buckets.take('y', 1, 1);
    time.advance(500);
    buckets.take('z', 1, 1);
    expect(buckets.size).toBe(3);
    // 'drained' was the oldest, and none was full again: it went first, so it starts over full.
    expect(buckets.take('drained', 1, 1).allowed).toBe(true);
    expect(buckets.size).toBe(3);
  });
});
