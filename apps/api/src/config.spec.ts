import { ConfigError, loadConfig, secretsOptionsOf } from './config';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      dataDir: '.data',
      databasePoolSize: 10,
      databaseStatementTimeoutMs: 30_000,
      adminApiToken: undefined,
      idempotencyKeyTtlSeconds: 86_400,
      requestBodyLimitBytes: 1_048_576,
      seedDemoCompany: true,
      logLevel: 'log',
      runWorker: true,
      workerConcurrency: 5,
      webhookSweepIntervalMs: 30_000,
      webhookAllowPrivateTargets: false,
      webhookRetryScheduleSeconds: [5, 300, 1800, 7200, 18000, 36000, 36000],
      webhookTimeoutMs: 10_000,
      webhookLeaseMs: 60_000,
      secretsKey: undefined,
      secretsKeyPrevious: undefined,
      benchmarkDisableIdempotency: false,
      shutdownTimeoutMs: 10_000,
    });
  });

  it('reads SECRETS_KEY and SECRETS_KEY_PREVIOUS; without SECRETS_KEY the key file lives in DATA_DIR', () => {
    const current = Buffer.alloc(32, 1);
    const previous = Buffer.alloc(32, 2);
    const config = loadConfig({
      SECRETS_KEY: current.toString('base64'),
      SECRETS_KEY_PREVIOUS: previous.toString('base64'),
    });
    expect(config.secretsKey).toEqual(current);
    expect(config.secretsKeyPrevious).toEqual(previous);
    expect(secretsOptionsOf(config)).toEqual({
      key: current,
      previousKey: previous,
      keyFile: '.data/secrets.key',
    });
    expect(secretsOptionsOf(loadConfig({ DATA_DIR: '/var/lib/lk' }))).toEqual({
      key: undefined,
      previousKey: undefined,
      keyFile: '/var/lib/lk/secrets.key',
    });
  });

  it('stops at boot on a secrets key of the wrong length or encoding, without printing it', () => {
    const problemsOf = (env: Record<string, string>): string[] => {
      try {
        loadConfig(env);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems;
        throw error;
      }
      return [];
    };
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
    expect(loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '1500', SHUTDOWN_TIMEOUT_MS: '4000' })).toMatchObject({
      databaseStatementTimeoutMs: 1500,
      shutdownTimeoutMs: 4000,
    });
    expect(() => loadConfig({ DATABASE_STATEMENT_TIMEOUT_MS: '0' })).toThrow(/DATABASE_STATEMENT_TIMEOUT_MS/);
    expect(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: '10s' })).toThrow(/SHUTDOWN_TIMEOUT_MS/);
  });

  it('reads the worker and webhook variables', () => {
    expect(
      loadConfig({
        RUN_WORKER: 'false',
        WORKER_CONCURRENCY: '2',
        WEBHOOK_SWEEP_INTERVAL_MS: '500',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_RETRY_SCHEDULE: '1, 1,2',
        WEBHOOK_TIMEOUT_MS: '1000',
        WEBHOOK_LEASE_SECONDS: '3',
      }),
    ).toMatchObject({
      runWorker: false,
      workerConcurrency: 2,
      webhookSweepIntervalMs: 500,
      webhookAllowPrivateTargets: true,
      webhookRetryScheduleSeconds: [1, 1, 2],
      webhookTimeoutMs: 1000,
      webhookLeaseMs: 3000,
    });
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5,,10' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '5,-1' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/);
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '10000', WEBHOOK_LEASE_SECONDS: '10' })).toThrow(
      /WEBHOOK_LEASE_SECONDS must exceed WEBHOOK_TIMEOUT_MS/,
    );
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig({ DATABASE_URL: '', ADMIN_API_TOKEN: '', IDEMPOTENCY_KEY_TTL: '' });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.adminApiToken).toBeUndefined();
    expect(config.idempotencyKeyTtlSeconds).toBe(86_400);
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
      databaseUrl: 'postgres://u@db:5432/x',
      dataDir: '/var/lib/lk',
      databasePoolSize: 20,
      adminApiToken: 'a-long-enough-token',
      idempotencyKeyTtlSeconds: 60,
      requestBodyLimitBytes: 2048,
      seedDemoCompany: false,
      logLevel: 'debug',
    });
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'abc',
        IDEMPOTENCY_KEY_TTL: '-5',
        DATABASE_URL: 'mysql://x',
        ADMIN_API_TOKEN: 'short',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/PORT/);
    expect(problems).toMatch(/IDEMPOTENCY_KEY_TTL/);
    expect(problems).toMatch(/DATABASE_URL/);
    expect(problems).toMatch(/ADMIN_API_TOKEN/);
    expect((error as ConfigError).problems).toHaveLength(4);
  });
});
