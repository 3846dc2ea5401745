import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's collector as `--expose-gc` exposes it; the options are V8's own (`gc({ type, execution, flavor })`). */
type ExposedGc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface IdleCollectorOptions {
  /** How long the process must have been quiet, after some work, before it collects. */
  quietMs: number;
  /** Runs one full collection that gives freed memory back (V8's memory-reducing "last resort" flavor). */
  collect: () => void;
  now?: () => number;
}

/**
 * Gives memory back once a burst of work is over. V8 runs a full collection when its old
 * generation reaches a limit set by the previous one, not when the load stops: after a burst of
 * requests the process keeps the burst's garbage, and its RSS stays at the peak until the next
 * burst (its memory reducer had not started 10 s after a load in our measurements). Here, once
 * the process has been quiet for `quietMs` after doing work, one full, memory-reducing collection
 * runs: one pause while nothing is waiting, at most once per quiet period.
 *
 * `noteActivity()` is the whole per-request cost: two assignments.
 */
export class IdleCollector {
  private lastActivity = 0;
  private worked = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  collections = 0;

  constructor(private readonly options: IdleCollectorOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * One full, memory-reducing collection, through V8's `gc` extension: what `node --expose-gc` puts
   * on the global object, taken here from a fresh context after setting the flag at run time, so
   * the process needs no start flag and its main context gets no global `gc` (contexts created
   * later do: the flag stays set).
   */
  static fullCollection(): () => void {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as ExposedGc;
    return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  }

  noteActivity(): void {
    this.lastActivity = this.now();
    this.worked = true;
  }

  /** Checks for a quiet period every `min(quietMs, 1 s)`; the timer never keeps the process alive. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), Math.min(this.options.quietMs, 1000));
    this.timer.unref();
  }

  /** One check: collects when there was work and none for `quietMs`. */
  tick(): void {
    if (!this.worked || this.now() - this.lastActivity < this.options.quietMs) return;
    this.worked = false;
    this.collections += 1;
    this.options.collect();
  }
}
