import { IdleCollector } from './idle-collector';

function collector(quietMs = 5000) {
  let clock = 1_000_000;
  const runs: number[] = [];
  const idle = new IdleCollector({ quietMs, collect: () => runs.push(clock), now: () => clock });
  return {
    idle,
    runs,
    advance: (ms: number) => {
      clock += ms;
      idle.tick();
    },
  };
}

describe('IdleCollector', () => {
  it('collects once the process has been quiet for quietMs after some work, once per quiet period', () => {
    const { idle, runs, advance } = collector(5000);
    idle.noteActivity();
    advance(4999);
    expect(runs).toHaveLength(0);
    advance(1);
    expect(runs).toHaveLength(1);
    advance(60_000);
    expect(runs).toHaveLength(1);
    expect(idle.collections).toBe(1);
  });

  it('never collects a process that did no work, and waits while requests keep coming', () => {
    const { idle, runs, advance } = collector(5000);
    advance(60_000);
    expect(runs).toHaveLength(0);
    for (let second = 0; second < 30; second += 1) {
      idle.noteActivity();
      advance(1000);
    }
    expect(runs).toHaveLength(0);
    advance(4000);
    expect(runs).toHaveLength(1);
    idle.noteActivity();
    advance(5000);
    expect(runs).toHaveLength(2);
  });

  it('frees the garbage of a burst with its full collection', () => {
    const collect = IdleCollector.fullCollection();
    let kept: unknown[] = [];
    for (let i = 0; i < 300_000; i += 1) kept.push({ i, text: `row ${i}` });
    const withGarbage = process.memoryUsage().heapUsed;
    kept = [];
    collect();
    expect(kept).toHaveLength(0);
    expect(process.memoryUsage().heapUsed).toBeLessThan(withGarbage - 10 * 1024 * 1024);
  });
});
