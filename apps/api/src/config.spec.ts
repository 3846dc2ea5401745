import { defaultPoolSize } from '@ledgerkey/database';
import { ConfigError } from '@ledgerkey/process';
import { configProblemsOf } from '../../../test/support/config-problems';
import { type ApiConfig, loadConfig } from './config';

function problemsOf(env: Record<string, string>): string[] {
  return configProblemsOf(() => loadConfig(env));
}

/** Every NODE_ENV but test: unset (a plain `npm start`), production (the image), anything else. */
const PRODUCTION_STARTS: Array<Record<string, string>> = [
  {},
  { NODE_ENV: 'production' },
  { NODE_ENV: 'development' },
];

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      databasePoolSize: defaultPoolSize(),
      adminApiToken: undefined,
      requestBodyLimitBytes: 1_048_576,
      seedDemoCompany: true,
      runWorker: true,
      idleGcAfterMs: 5000,
      process: { logLevel: 'log', shutdownTimeoutMs: 10_000 },
      database: { url: undefined, dataDir: '.data', statementTimeoutMs: 30_000, preparedStatements: 200 },
      secrets: { key: undefined, previousKey: undefined, keyFile: '.data/secrets.key' },
      idempotency: {
        ttlSeconds: 86_400,
        benchmarkBypass: false,
        replayCache: { maxEntries: 10_000, maxBytes: 16_777_216 },
      },
      jobs: { concurrency: 5 },
      webhooks: {
        allowPrivateTargets: false,
        retryScheduleSeconds: [5, 300, 1800, 7200, 18000, 36000, 36000],
        timeoutMs: 10_000,
        leaseMs: 60_000,
        sweepIntervalMs: 30_000,
      },
      payments: {
        provider: { url: undefined, apiKey: undefined, webhookSecret: undefined },
        sandbox: { faults: undefined, payoutIntervalMs: undefined },
        providerTimeoutMs: 10_000,
        leaseSeconds: 60,
        reconciliationIntervalMinutes: 15,
        recovery: { intervalMs: 30_000, maxAttempts: 10 },
        testCrashPoint: undefined,
      },
      rateLimits: { perSecond: 100, unverifiedPerSecond: 10 },
    });
  });

  it('reads RATE_LIMIT_UNVERIFIED_PER_SECOND, a positive integer up to 1000000, apart from the company limit', () => {
    expect(loadConfig({ RATE_LIMIT_UNVERIFIED_PER_SECOND: '3' }).rateLimits).toEqual({
      perSecond: 100,
      unverifiedPerSecond: 3,
    });
    for (const value of ['0', '1000001', 'many']) {
      expect(() => loadConfig({ RATE_LIMIT_UNVERIFIED_PER_SECOND: value })).toThrow(
        /RATE_LIMIT_UNVERIFIED_PER_SECOND/,
      );
    }
  });

  it('reads RATE_LIMIT_PER_SECOND, a positive integer up to 1000000', () => {
    expect(loadConfig({ RATE_LIMIT_PER_SECOND: '7' }).rateLimits).toEqual({
      perSecond: 7,
      unverifiedPerSecond: 10,
    });
    expect(() => loadConfig({ RATE_LIMIT_PER_SECOND: '0' })).toThrow(/RATE_LIMIT_PER_SECOND/);
    expect(() => loadConfig({ RATE_LIMIT_PER_SECOND: '1000001' })).toThrow(/RATE_LIMIT_PER_SECOND/);
    expect(() => loadConfig({ RATE_LIMIT_PER_SECOND: 'many' })).toThrow(/RATE_LIMIT_PER_SECOND/);
  });

  it('reads the payment provider and its bounds; the lease covers two provider calls', () => {
    expect(
      loadConfig({
        PAYMENT_PROVIDER_URL: 'http://127.0.0.1:4010',
        PAYMENT_PROVIDER_API_KEY: 'sk_test_0123456789abcdef',
        PAYMENT_PROVIDER_TIMEOUT_MS: '2000',
        PAYMENT_LEASE_SECONDS: '5',
        PAYMENT_RECOVERY_INTERVAL_MS: '500',
        PAYMENT_RECOVERY_MAX_ATTEMPTS: '3',
      }).payments,
    ).toMatchObject({
      provider: { url: 'http://127.0.0.1:4010', apiKey: 'sk_test_0123456789abcdef' },
      providerTimeoutMs: 2000,
      leaseSeconds: 5,
      recovery: { intervalMs: 500, maxAttempts: 3 },
    });
    expect(
      problemsOf({
        PAYMENT_PROVIDER_URL: 'ftp://provider',
        PAYMENT_PROVIDER_TIMEOUT_MS: '5000',
        PAYMENT_LEASE_SECONDS: '10',
      }),
    ).toEqual([
      'PAYMENT_PROVIDER_URL must be an http(s) URL (got "ftp://provider")',
      'PAYMENT_LEASE_SECONDS must cover two provider calls (2 × PAYMENT_PROVIDER_TIMEOUT_MS) and one second more',
    ]);
    expect(problemsOf({ PAYMENT_PROVIDER_URL: 'http://provider' })).toEqual([
      'PAYMENT_PROVIDER_API_KEY must be set with PAYMENT_PROVIDER_URL',
    ]);
  });

  it('seeds (and prints) a demo company by default, but not with NODE_ENV=production, where asking for it is refused', () => {
    expect(loadConfig({}).seedDemoCompany).toBe(true);
    expect(loadConfig({ SEED_DEMO_COMPANY: 'false' }).seedDemoCompany).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production' }).seedDemoCompany).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', SEED_DEMO_COMPANY: 'false' }).seedDemoCompany).toBe(false);
    expect(problemsOf({ NODE_ENV: 'production', SEED_DEMO_COMPANY: 'true' })).toEqual([
      'SEED_DEMO_COMPANY=true prints an API key into the logs: it is refused with NODE_ENV=production ' +
        '(create companies with `company:create` or POST /admin/companies)',
    ]);
  });

  describe('refuses every test and benchmark switch outside NODE_ENV=test', () => {
    // One row per switch: a production start refuses it whatever its value, naming it; tests and
    // the benchmark set NODE_ENV=test.
    it.each([
      {
        name: 'PAYMENT_TEST_CRASH_POINT',
        value: 'after_provider_answer',
        off: undefined,
        problem:
          'PAYMENT_TEST_CRASH_POINT makes the process kill itself during every payment: for tests and ' +
          'benchmarks only, refused unless NODE_ENV=test',
        read: (config: ApiConfig): unknown => config.payments.testCrashPoint,
        expected: 'after_provider_answer',
      },
      {
        name: 'BENCHMARK_DISABLE_IDEMPOTENCY',
        value: 'true',
        off: 'false',
        problem:
          'BENCHMARK_DISABLE_IDEMPOTENCY runs keyed routes without the idempotency layer (a retried payment ' +
          'charges again): for tests and benchmarks only, refused unless NODE_ENV=test',
        read: (config: ApiConfig): unknown => config.idempotency.benchmarkBypass,
        expected: true,
      },
    ])('$name', ({ name, value, off, problem, read, expected }) => {
      for (const nodeEnv of PRODUCTION_STARTS) {
        expect(problemsOf({ ...nodeEnv, [name]: value })).toEqual([problem]);
        if (off !== undefined) expect(problemsOf({ ...nodeEnv, [name]: off })).toEqual([problem]);
      }
      expect(read(loadConfig({ NODE_ENV: 'test', [name]: value }))).toEqual(expected);
      expect(read(loadConfig({ NODE_ENV: 'production', [name]: '' }))).toBe(read(loadConfig({})));
    });

    it('names them among the other bad variables, all at once', () => {
      expect(
        problemsOf({
          NODE_ENV: 'production',
          PORT: 'abc',
          BENCHMARK_DISABLE_IDEMPOTENCY: 'true',
          PAYMENT_TEST_CRASH_POINT: 'before_provider_call',
        }),
      ).toEqual([
        'PORT must be an integer from 0 to 65535 (got "abc")',
        expect.stringMatching(/^BENCHMARK_DISABLE_IDEMPOTENCY .*refused unless NODE_ENV=test$/),
        expect.stringMatching(/^PAYMENT_TEST_CRASH_POINT .*refused unless NODE_ENV=test$/),
      ]);
    });

    it('checks their values under NODE_ENV=test', () => {
      expect(problemsOf({ NODE_ENV: 'test', PAYMENT_TEST_CRASH_POINT: 'anywhere' })).toEqual([
        'PAYMENT_TEST_CRASH_POINT must be one of before_provider_call, after_provider_answer',
      ]);
      expect(problemsOf({ NODE_ENV: 'test', BENCHMARK_DISABLE_IDEMPOTENCY: 'yes' })).toEqual([
        'BENCHMARK_DISABLE_IDEMPOTENCY must be true or false (got "yes")',
      ]);
      expect(
        loadConfig({ NODE_ENV: 'test', BENCHMARK_DISABLE_IDEMPOTENCY: 'false' }).idempotency.benchmarkBypass,
      ).toBe(false);
    });
  });

  it('reads SECRETS_KEY and SECRETS_KEY_PREVIOUS; without SECRETS_KEY the key file lives in DATA_DIR', () => {
    const current = Buffer.alloc(32, 1);
    const previous = Buffer.alloc(32, 2);
    const config = loadConfig({
      SECRETS_KEY: current.toString('base64'),
      SECRETS_KEY_PREVIOUS: previous.toString('base64'),
    });
    expect(config.secrets).toEqual({
      key: current,
      previousKey: previous,
      keyFile: '.data/secrets.key',
    });
    expect(loadConfig({ DATA_DIR: '/var/lib/lk' }).secrets).toEqual({
      key: undefined,
      previousKey: undefined,
      keyFile: '/var/lib/lk/secrets.key',
    });
  });

  it('stops at boot on a secrets key of the wrong length or encoding, without printing it', () => {
    const short = Buffer.alloc(16, 3).toString('base64');
    expect(problemsOf({ SECRETS_KEY: short })).toEqual([
      expect.stringMatching(/^SECRETS_KEY must be base64 of exactly 32 bytes .*decodes to 16 bytes$/),
    ]);
    expect(problemsOf({ SECRETS_KEY: short }).join()).not.toContain(short);
    expect(problemsOf({ SECRETS_KEY: 'not-a-key!', SECRETS_KEY_PREVIOUS: 'zz' })).toEqual([
      expect.stringMatching(/^SECRETS_KEY must be base64 .*not base64$/),
      expect.stringMatching(/^SECRETS_KEY_PREVIOUS must be base64 .*decodes to 1 bytes$/),
    ]);
    const key = Buffer.alloc(32, 4).toString('base64');
    expect(problemsOf({ SECRETS_KEY_PREVIOUS: key })).toEqual([
      'SECRETS_KEY_PREVIOUS needs SECRETS_KEY (the key that replaces it)',
    ]);
    expect(problemsOf({ SECRETS_KEY: key, SECRETS_KEY_PREVIOUS: key })).toEqual([
      'SECRETS_KEY_PREVIOUS must differ from SECRETS_KEY',
    ]);
  });

  it('reads the database statement timeout and the shutdown bound', () => {
    const config = loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '1500', SHUTDOWN_TIMEOUT_MS: '4000' });
    expect(config.database.statementTimeoutMs).toBe(1500);
    expect(config.process.shutdownTimeoutMs).toBe(4000);
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0' })).toThrow(/DATABASE_STATEMENT_TIMEOUT_MS/);
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: '10s' })).toThrow(/SHUTDOWN_TIMEOUT_MS/);
  });

  it('reads how many statements a connection keeps prepared; 0 turns them off', () => {
    expect(loadConfig({}).database.preparedStatements).toBe(200);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: '0' }).database.preparedStatements).toBe(0);
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: '50' }).database.preparedStatements).toBe(50);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: '-1' })).toThrow(/DATABASE_PREPARED_STATEMENTS/);
  });

  it('reads the idle collection delay; 0 turns it off', () => {
    expect(loadConfig({ IDLE_GC_AFTER_MS: '0' }).idleGcAfterMs).toBe(0);
    expect(loadConfig({ IDLE_GC_AFTER_MS: '30000' }).idleGcAfterMs).toBe(30000);
    expect(() => loadConfig({ IDLE_GC_AFTER_MS: '-1' })).toThrow(/IDLE_GC_AFTER_MS/);
  });

  it('reads the worker and webhook variables', () => {
    const config = loadConfig({
      RUN_WORKER: 'false',
      WORKER_CONCURRENCY: '2',
      WEBHOOK_SWEEP_INTERVAL_MS: '500',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '1, 1,2',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_LEASE_SECONDS: '3',
    });
    expect(config.runWorker).toBe(false);
    expect(config.jobs).toEqual({ concurrency: 2 });
    expect(config.webhooks).toEqual({
      sweepIntervalMs: 500,
      allowPrivateTargets: true,
      retryScheduleSeconds: [1, 1, 2],
      timeoutMs: 1000,
      leaseMs: 3000,
    });
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5,,10' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5,-1' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '10000', WEBHOOK_LEASE_SECONDS: '10' })).toThrow(
      /WEBHOOK_LEASE_SECONDS must exceed WEBHOOK_TIMEOUT_MS/,
    );
  });

  it('reads the replay cache limits: entries from 0 (off), bytes from 1 MiB', () => {
    expect(
      loadConfig({ IDEMPOTENCY_REPLAY_CACHE_SIZE: '0', IDEMPOTENCY_REPLAY_CACHE_BYTES: '1048576' })
        .idempotency.replayCache,
    ).toEqual({ maxEntries: 0, maxBytes: 1_048_576 });
    expect(
      problemsOf({ IDEMPOTENCY_REPLAY_CACHE_SIZE: '-1', IDEMPOTENCY_REPLAY_CACHE_BYTES: '1000' }),
    ).toEqual([
      'IDEMPOTENCY_REPLAY_CACHE_SIZE must be an integer from 0 to 1000000 (got "-1")',
      'IDEMPOTENCY_REPLAY_CACHE_BYTES must be an integer from 1048576 to 4294967296 (got "1000")',
    ]);
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig({ DATABASE_URL: '', ADMIN_API_TOKEN: '', IDEMPOTENCY_KEY_TTL: '' });
    expect(config.database.url).toBeUndefined();
    expect(config.adminApiToken).toBeUndefined();
    expect(config.idempotency.ttlSeconds).toBe(86_400);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/x',
      DATA_DIR: '/var/lib/lk',
      DATABASE_POOL_SIZE: '20',
      ADMIN_API_TOKEN: 'a-long-enough-token',
      IDEMPOTENCY_KEY_TTL: '60',
      REQUEST_BODY_LIMIT_BYTES: '2048',
      SEED_DEMO_COMPANY: 'false',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databasePoolSize: 20,
      adminApiToken: 'a-long-enough-token',
      requestBodyLimitBytes: 2048,
      seedDemoCompany: false,
      process: { logLevel: 'debug' },
      database: { url: 'postgres://u@db:5432/x', dataDir: '/var/lib/lk' },
      idempotency: { ttlSeconds: 60, benchmarkBypass: false },
    });
  });

  it('names every bad variable at once, across the libs’ parsers', () => {
    const problems = problemsOf({
      PORT: 'abc',
      IDEMPOTENCY_KEY_TTL: '-5',
      DATABASE_URL: 'mysql://x',
      ADMIN_API_TOKEN: 'short',
      LOG_LEVEL: 'loud',
      WORKER_CONCURRENCY: '0',
      WEBHOOK_TIMEOUT_MS: 'soon',
      SECRETS_KEY: 'zz',
    });
    expect(problems).toEqual([
      'ADMIN_API_TOKEN must be at least 16 characters',
      'PORT must be an integer from 0 to 65535 (got "abc")',
      'LOG_LEVEL must be one of error, warn, log, debug',
      'DATABASE_URL must be a postgres:// or postgresql:// URL',
      expect.stringMatching(/^SECRETS_KEY must be base64/),
      'IDEMPOTENCY_KEY_TTL must be an integer from 1 to 2678400 (got "-5")',
      'WORKER_CONCURRENCY must be an integer from 1 to 100 (got "0")',
      'WEBHOOK_TIMEOUT_MS must be an integer from 100 to 120000 (got "soon")',
    ]);
    expect(() => loadConfig({ PORT: 'abc' })).toThrow(ConfigError);
  });
});
