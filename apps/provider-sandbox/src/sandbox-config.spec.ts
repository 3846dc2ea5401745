import { ConfigError } from '@ledgerkey/process';
import { loadSandboxConfig } from './sandbox-config';

describe('loadSandboxConfig', () => {
  it('has working defaults', () => {
    const config = loadSandboxConfig({});
    expect(config).toMatchObject({
      host: '127.0.0.1',
      port: 4010,
      dataDir: '.data/provider-sandbox',
      apiKey: undefined,
      webhookUrl: undefined,
      webhookSecret: undefined,
      seed: undefined,
      timeoutHoldMs: 30_000,
      payoutIntervalMs: 0,
      payoutFeeBps: 150,
      exitOnStdinEnd: false,
    });
    expect(config.faults.error).toBe(0);
  });

  it('reads the fault mix and the seed', () => {
    const config = loadSandboxConfig({ PROVIDER_SANDBOX_FAULTS: 'error=0.25', PROVIDER_SANDBOX_SEED: '17' });
    expect(config.faults.error).toBe(0.25);
    expect(config.seed).toBe(17);
  });

  it('fails naming every bad variable', () => {
    const load = (): unknown =>
      loadSandboxConfig({
        PROVIDER_SANDBOX_FAULTS: 'error=2',
        PROVIDER_SANDBOX_SEED: '-1',
        PROVIDER_SANDBOX_WEBHOOK_URL: 'ftp://example.test',
        PAYMENT_PROVIDER_WEBHOOK_SECRET: 'secret',
        PROVIDER_SANDBOX_API_KEY: 'short',
        PROVIDER_SANDBOX_PORT: '70000',
        PROVIDER_SANDBOX_WEBHOOK_RETRY_BASE_MS: '5000',
        PROVIDER_SANDBOX_WEBHOOK_RETRY_MAX_MS: '1000',
      });
    expect(load).toThrow(ConfigError);
    let problems: string[] = [];
    try {
      load();
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    for (const name of [
      'PROVIDER_SANDBOX_FAULTS: error must be a probability',
      'PROVIDER_SANDBOX_SEED',
      'PROVIDER_SANDBOX_WEBHOOK_URL',
      'PAYMENT_PROVIDER_WEBHOOK_SECRET',
      'PROVIDER_SANDBOX_API_KEY',
      'PROVIDER_SANDBOX_PORT',
      'PROVIDER_SANDBOX_WEBHOOK_RETRY_MAX_MS must not be below',
    ]) {
      expect(problems.some((problem) => problem.startsWith(name))).toBe(true);
    }
  });

  it('accepts a Standard Webhooks secret of 24 to 64 bytes only', () => {
    const secret = (bytes: number): string => `whsec_${Buffer.alloc(bytes, 1).toString('base64')}`;
    expect(loadSandboxConfig({ PAYMENT_PROVIDER_WEBHOOK_SECRET: secret(32) }).webhookSecret).toBe(secret(32));
    expect(() => loadSandboxConfig({ PAYMENT_PROVIDER_WEBHOOK_SECRET: secret(16) })).toThrow(
      'PAYMENT_PROVIDER_WEBHOOK_SECRET',
    );
  });
});
