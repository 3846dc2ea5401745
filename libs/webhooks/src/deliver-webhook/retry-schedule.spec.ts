import { maxAttemptsOf, retryDelayMs } from './retry-schedule';

describe('retryDelayMs', () => {
  const schedule = [5, 300, 1800];

  it('follows the schedule, with ±20 % jitter', () => {
    expect(retryDelayMs(schedule, 1, () => 0.5)).toBe(5000);
    expect(retryDelayMs(schedule, 1, () => 0)).toBe(4000);
    expect(retryDelayMs(schedule, 1, () => 0.999999)).toBe(6000);
    expect(retryDelayMs(schedule, 2, () => 0.5)).toBe(300_000);
    expect(retryDelayMs(schedule, 3, () => 0.5)).toBe(1_800_000);
  });

  it('stops after the last delay: schedule length + 1 attempts', () => {
    expect(retryDelayMs(schedule, 4)).toBeNull();
    expect(maxAttemptsOf(schedule)).toBe(4);
  });
});
