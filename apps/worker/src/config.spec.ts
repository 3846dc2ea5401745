import { configProblemsOf } from '../../../test/support/config-problems';
import { loadConfig } from './config';

const DATABASE_URL = 'postgres://u@db:5432/x';
const PROVIDER = {
  PAYMENT_PROVIDER_URL: 'http://provider:4010',
  PAYMENT_PROVIDER_API_KEY: 'sk_test_0123456789abcdef',
};

function problemsOf(env: Record<string, string>): string[] {
  return configProblemsOf(() => loadConfig(env));
}

describe('loadConfig (standalone worker)', () => {
  it('reads only what the worker uses, with the API’s defaults', () => {
    expect(loadConfig({ DATABASE_URL, ...PROVIDER })).toEqual({
      process: { logLevel: 'log', shutdownTimeoutMs: 10_000 },
      database: { url: DATABASE_URL, dataDir: '.data', statementTimeoutMs: 30_000, preparedStatements: 200 },
      secrets: { key: undefined, previousKey: undefined, keyFile: '.data/secrets.key' },
      jobs: { concurrency: 5 },
      webhooks: {
        allowPrivateTargets: false,
        retryScheduleSeconds: [5, 300, 1800, 7200, 18000, 36000, 36000],
        timeoutMs: 10_000,
        leaseMs: 60_000,
        sweepIntervalMs: 30_000,
      },
      idempotency: { ttlSeconds: 86_400 },
      payments: {
        provider: {
          url: PROVIDER.PAYMENT_PROVIDER_URL,
          apiKey: PROVIDER.PAYMENT_PROVIDER_API_KEY,
          webhookSecret: undefined,
        },
        sandbox: { faults: undefined, payoutIntervalMs: undefined },
        providerTimeoutMs: 10_000,
        leaseSeconds: 60,
        reconciliationIntervalMinutes: 15,
        recovery: { intervalMs: 30_000, maxAttempts: 10 },
        testCrashPoint: undefined,
      },
    });
  });

  it('needs DATABASE_URL and PAYMENT_PROVIDER_URL, named among the other problems', () => {
    expect(problemsOf({})).toEqual([
      'DATABASE_URL must be set for the standalone worker (npm start runs a worker inside the API instead)',
      'PAYMENT_PROVIDER_URL must be set for the standalone worker: it resumes interrupted payments (npm ' +
        'start runs the provider sandbox and a worker inside the API instead)',
    ]);
    expect(problemsOf({ ...PROVIDER })).toEqual([
      'DATABASE_URL must be set for the standalone worker (npm start runs a worker inside the API instead)',
    ]);
    expect(problemsOf({ ...PROVIDER, WORKER_CONCURRENCY: '500', SHUTDOWN_TIMEOUT_MS: '1' })).toEqual([
      'SHUTDOWN_TIMEOUT_MS must be an integer from 1000 to 600000 (got "1")',
      'WORKER_CONCURRENCY must be an integer from 1 to 100 (got "500")',
      'DATABASE_URL must be set for the standalone worker (npm start runs a worker inside the API instead)',
    ]);
  });

  it('reads the same variables as the API under the same names', () => {
    const key = Buffer.alloc(32, 7);
    const config = loadConfig({
      DATABASE_URL,
      ...PROVIDER,
      DATA_DIR: '/var/lib/lk',
      DATABASE_STATEMENT_TIMEOUT_MS: '1500',
      DATABASE_PREPARED_STATEMENTS: '20',
      SECRETS_KEY: key.toString('base64'),
      WORKER_CONCURRENCY: '3',
      WEBHOOK_RETRY_SCHEDULE: '1,2',
      WEBHOOK_SWEEP_INTERVAL_MS: '500',
      LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({
      process: { logLevel: 'warn' },
      database: {
        url: DATABASE_URL,
        dataDir: '/var/lib/lk',
        statementTimeoutMs: 1500,
        preparedStatements: 20,
      },
      secrets: { key, keyFile: '/var/lib/lk/secrets.key' },
      jobs: { concurrency: 3 },
      webhooks: { retryScheduleSeconds: [1, 2], sweepIntervalMs: 500 },
    });
  });

  it('ignores what only the API reads', () => {
    expect(() =>
      loadConfig({
        DATABASE_URL,
        ...PROVIDER,
        PORT: 'not-a-port',
        ADMIN_API_TOKEN: 'short',
        DATABASE_POOL_SIZE: '0',
      }),
    ).not.toThrow();
  });

  it('refuses the test and benchmark switches outside NODE_ENV=test, as the API does', () => {
    const switches = {
      PAYMENT_TEST_CRASH_POINT: 'before_provider_call',
      BENCHMARK_DISABLE_IDEMPOTENCY: 'true',
    };
    for (const nodeEnv of [{}, { NODE_ENV: 'production' }] as Array<Record<string, string>>) {
      expect(problemsOf({ DATABASE_URL, ...PROVIDER, ...nodeEnv, ...switches })).toEqual([
        expect.stringMatching(/^BENCHMARK_DISABLE_IDEMPOTENCY .*refused unless NODE_ENV=test$/),
        expect.stringMatching(/^PAYMENT_TEST_CRASH_POINT .*refused unless NODE_ENV=test$/),
      ]);
    }
    expect(
      loadConfig({ DATABASE_URL, ...PROVIDER, NODE_ENV: 'test', ...switches }).payments.testCrashPoint,
    ).toBe('before_provider_call');
  });

  it('refuses bad worker and webhook variables, all at once', () => {
    expect(
      problemsOf({
        DATABASE_URL,
        ...PROVIDER,
        WEBHOOK_TIMEOUT_MS: '10000',
        WEBHOOK_LEASE_SECONDS: '10',
        SECRETS_KEY: 'zz',
      }),
    ).toEqual([
      expect.stringMatching(/^SECRETS_KEY must be base64/),
      'WEBHOOK_LEASE_SECONDS must exceed WEBHOOK_TIMEOUT_MS by at least one second',
    ]);
  });
});
