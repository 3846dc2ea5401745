import { startApiProcess, stopAllApiProcesses } from '../support/api-process';

const TEST_TIMEOUT_MS = 90_000;

/**
 * Switches that turn a guarantee off exist for tests and the benchmark only: the built API, started
 * as production starts it, refuses each of them at boot unless NODE_ENV=test — exit code 1 and the
 * variable named — and starts with it under NODE_ENV=test. (The parsers' messages, every value and
 * the standalone worker: apps/api/src/config.spec.ts and apps/worker/src/config.spec.ts.)
 */
describe('the production start refuses test and benchmark switches', () => {
  afterAll(() => stopAllApiProcesses());

  it.each([
    { name: 'BENCHMARK_DISABLE_IDEMPOTENCY', value: 'true' },
    { name: 'PAYMENT_TEST_CRASH_POINT', value: 'before_provider_call' },
  ])(
    '$name',
    async ({ name, value }) => {
      // startApiProcess passes none of the test runner's environment: NODE_ENV is unset unless given.
      for (const nodeEnv of [{}, { NODE_ENV: 'production' }] as Array<Record<string, string>>) {
        const start = startApiProcess({ env: { ...nodeEnv, [name]: value } });
        await expect(start).rejects.toThrow(/the API exited \(\{"code":1,"signal":null\}\) before listening/);
        await expect(start).rejects.toThrow(
          new RegExp(`Invalid configuration:\\n {2}- ${name} .*refused unless NODE_ENV=test`),
        );
      }
      const api = await startApiProcess({ env: { NODE_ENV: 'test', [name]: value } });
      await api.kill();
    },
    TEST_TIMEOUT_MS,
  );
});
