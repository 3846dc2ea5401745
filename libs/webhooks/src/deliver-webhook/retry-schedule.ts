/**
 * Spread of a retry around its scheduled delay: ±20 %, so endpoints coming back from an
 * outage are not hit by every delayed delivery in the same second.
 */
const JITTER = 0.2;

/**
 * Delay before the attempt after attempt number `attemptNumber` (1-based), or null when
 * that was the last one. `scheduleSeconds` is WEBHOOK_RETRY_SCHEDULE: the delays grow
 * (exponential backoff), and the delivery gets `scheduleSeconds.length + 1` attempts.
 */
export function retryDelayMs(
  scheduleSeconds: readonly number[],
  attemptNumber: number,
  random: () => number = Math.random,
): number | null {
  const base = scheduleSeconds[attemptNumber - 1];
  if (base === undefined) return null;
  return Math.round(base * 1000 * (1 - JITTER + 2 * JITTER * random()));
}

/** Attempts a delivery gets in all. */
export function maxAttemptsOf(scheduleSeconds: readonly number[]): number {
  return scheduleSeconds.length + 1;
}
