import { DEFAULT_REORDER_DELAY_MS, type FaultMix } from './fault-mix';
import { type Random, seededRandom } from './seeded-random';

/** What the fault mix picked for one charge or refund request. */
export type RequestFault = 'error' | 'timeout' | 'lost_response';

/** How many faults were injected since the process started. */
export interface InjectedFaults {
  error: number;
  timeout: number;
  lostResponse: number;
  duplicateWebhook: number;
}

/**
 * The current fault mix and its random draws, from three generators seeded from the one seed:
 * request faults (`seed`), decisions made when an event is created (`seed + 1`: duplicate, first
 * delay) and delivery draws (`seed + 2`: which due event next, retry jitter). The first two are
 * drawn in commit order, so with requests sent one after another a seeded run injects the same
 * faults and duplicates whatever the timing of deliveries.
 */
export class Faults {
  readonly injected: InjectedFaults = { error: 0, timeout: 0, lostResponse: 0, duplicateWebhook: 0 };
  private requestRandom: Random;
  private eventRandom: Random;
  private deliveryRandom: Random;

  constructor(
    private current: FaultMix,
    private currentSeed: number,
  ) {
    this.requestRandom = seededRandom(currentSeed);
    this.eventRandom = seededRandom(currentSeed + 1);
    this.deliveryRandom = seededRandom(currentSeed + 2);
  }

  get mix(): FaultMix {
    return this.current;
  }

  get seed(): number {
    return this.currentSeed;
  }

  /** Replaces the mix; with a seed, both generators start over from it. */
  set(mix: FaultMix, seed?: number): void {
    this.current = mix;
    if (seed !== undefined) {
      this.currentSeed = seed;
      this.requestRandom = seededRandom(seed);
      this.eventRandom = seededRandom(seed + 1);
      this.deliveryRandom = seededRandom(seed + 2);
    }
  }

  /** One draw per charge or refund request: at most one of error, timeout, lost response. */
  drawRequestFault(): RequestFault | null {
    const { error, timeout, lostResponse } = this.current;
    const draw = this.requestRandom();
    if (draw < error) return 'error';
    if (draw < error + timeout) return 'timeout';
    if (draw < error + timeout + lostResponse) return 'lost_response';
    return null;
  }

  /** Counts a fault that happened (drawn from the mix or asked for by a magic payment method). */
  count(fault: RequestFault): void {
    if (fault === 'error') this.injected.error += 1;
    else if (fault === 'timeout') this.injected.timeout += 1;
    else this.injected.lostResponse += 1;
  }

  /** 2 when a new event is to be delivered twice (duplicate_webhook), else 1. */
  eventCopies(): number {
    if (this.current.duplicateWebhook > 0 && this.eventRandom() < this.current.duplicateWebhook) {
      this.injected.duplicateWebhook += 1;
      return 2;
    }
    return 1;
  }

  /** How long a new event waits before its first attempt. */
  firstAttemptDelayMs(): number {
    const { reorderWebhooks, webhookDelayMs } = this.current;
    if (!reorderWebhooks) return webhookDelayMs;
    return Math.floor(this.eventRandom() * (webhookDelayMs || DEFAULT_REORDER_DELAY_MS));
  }

  /** The next event to attempt among those due (sorted oldest first): the oldest, or any when reordering. */
  pick<Item>(due: readonly Item[]): Item {
    if (!this.current.reorderWebhooks) return due[0];
    return due[Math.floor(this.deliveryRandom() * due.length)];
  }

  /** A factor from 0.8 to 1.2 for retry delays. */
  jitter(): number {
    return 0.8 + this.deliveryRandom() * 0.4;
  }
}
