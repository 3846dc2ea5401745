import type { Clock } from '@ledgerkey/idempotency';

/** A clock the test moves: leases and replay windows expire without sleeping. */
export class TestClock implements Clock {
  private current: number;

  constructor(start: Date = new Date()) {
    this.current = start.getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  advance(seconds: number): this {
    this.current += seconds * 1000;
    return this;
  }
}
