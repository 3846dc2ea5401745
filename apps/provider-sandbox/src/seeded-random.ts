import { randomInt } from 'node:crypto';

/** A number from 0 (inclusive) to 1 (exclusive). */
export type Random = () => number;

export const MAX_SEED = 0xffff_ffff;

/**
 * mulberry32: a small, fast 32-bit generator; the same seed gives the same sequence, which is all
 * the fault injection needs (reproducible test runs), not cryptographic quality.
 */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seed for a run without PROVIDER_SANDBOX_SEED (printed at start, so the run can be repeated). */
export function freshSeed(): number {
  return randomInt(0, MAX_SEED);
}
