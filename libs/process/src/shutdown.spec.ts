import type { LoggerService } from '@nestjs/common';
import { shutdown, type ShutdownPhase } from './shutdown';

function recordingLogger(): LoggerService & { lines: string[] } {
  const lines: string[] = [];
  const record = (level: string) => (message: unknown) => lines.push(`${level}: ${String(message)}`);
  return { lines, log: record('log'), warn: record('warn'), error: record('error') };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `shutdown` on Jest's fake clock (timers and `Date`), so the bounds are exact whatever the
 * machine's load: resolves with the exit code it chose, when, and what it had logged by then.
 */
async function stop(
  phases: ShutdownPhase[],
  timeoutMs: number,
  logger = recordingLogger(),
): Promise<{ code: number; elapsedMs: number; lines: string[] }> {
  const started = Date.now();
  let exited: { code: number; elapsedMs: number; lines: string[] } | undefined;
  const exit = (code: number) => {
    exited ??= { code, elapsedMs: Date.now() - started, lines: [...logger.lines] };
  };
  void shutdown(phases, { timeoutMs, logger, exit });
  await jest.runAllTimersAsync();
  if (exited === undefined) throw new Error('shutdown did not exit');
  return exited;
}

describe('shutdown', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it('runs the phases in order, the steps of a phase together, and exits 0 when all end', async () => {
    const order: string[] = [];
    const step = (name: string, ms: number) => ({
      name,
      run: async () => {
        order.push(`${name} started`);
        await sleep(ms);
        order.push(`${name} ended`);
      },
    });

    const result = await stop(
      [
        { until: 0.6, steps: [step('http', 60), step('jobs', 20)] },
        { until: 1, steps: [step('pool', 10)] },
      ],
      2_000,
    );

    expect(result.code).toBe(0);
    expect(order).toEqual([
      'http started',
      'jobs started',
      'jobs ended',
      'http ended',
      'pool started',
      'pool ended',
    ]);
    expect(result.lines.at(-1)).toMatch(/^log: stopped in \d+ ms$/);
  });

  it('gives up on a step at its share of the bound, still runs the next phase, and exits 1', async () => {
    let poolClosed = false;
    const result = await stop(
      [
        { until: 0.5, steps: [{ name: 'job runner', run: () => new Promise(() => undefined) }] },
        {
          until: 1,
          steps: [
            {
              name: 'database pool',
              run: async () => {
                poolClosed = true;
              },
            },
          ],
        },
      ],
      1_000,
    );

    expect(poolClosed).toBe(true);
    expect(result.code).toBe(1);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(450);
    expect(result.elapsedMs).toBeLessThan(900);
    expect(result.lines).toContain(
      'warn: job runner did not stop within its share of the bound; going on without it',
    );
    expect(result.lines.at(-1)).toMatch(/without a clean end of: job runner \(given up\)$/);
  });

  it('exits 1 at the bound, naming what is still pending, when the last phase does not end', async () => {
    const result = await stop(
      [
        { until: 0.5, steps: [{ name: 'HTTP server', run: () => new Promise(() => undefined) }] },
        { until: 1.5, steps: [{ name: 'database pool', run: () => new Promise(() => undefined) }] },
      ],
      600,
    );

    expect(result.code).toBe(1);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(580);
    expect(result.elapsedMs).toBeLessThan(1_000);
    expect(result.lines.at(-1)).toBe(
      'error: stop did not finish within 600 ms; still pending: HTTP server, database pool; exiting',
    );
  });

  it('exits 1 when a step fails, after running the others', async () => {
    const result = await stop(
      [
        {
          until: 1,
          steps: [
            { name: 'job runner', run: () => Promise.reject(new Error('Runner is already stopped')) },
            { name: 'HTTP server', run: () => sleep(10) },
          ],
        },
      ],
      1_000,
    );

    expect(result.code).toBe(1);
    expect(result.lines).toContain('error: stopping job runner failed: Runner is already stopped');
  });
});
