import { join } from 'node:path';
import type { PaymentsConfig } from '../payments-config';
import { type RunningProviderSandbox, startProviderSandbox } from './start-provider-sandbox';

export interface PaymentProviderHandle {
  /** The configuration with the provider's URL, API key and webhook secret filled in. */
  config: PaymentsConfig;
  /** The sandbox this process started (no PAYMENT_PROVIDER_URL); stopped at shutdown. */
  sandbox: RunningProviderSandbox | undefined;
}

/**
 * Zero setup for payments, as for the database: PAYMENT_PROVIDER_URL if set, else the bundled
 * provider sandbox, started as a child of this process with its state under
 * `<DATA_DIR>/provider-sandbox/` (kept across restarts), on a free loopback port. Its API key and
 * webhook secret are its own (generated into that folder once) unless
 * PAYMENT_PROVIDER_WEBHOOK_SECRET is set; its webhooks go to `webhookUrl` (this process's
 * `/v1/providers/sandbox/events`, verified with the same secret), with PROVIDER_SANDBOX_FAULTS and
 * PROVIDER_SANDBOX_PAYOUT_INTERVAL_MS passed on. It lives and dies with this process.
 * @throws Error when the sandbox cannot start (not built, or another live process holds its data dir)
 */
export async function preparePaymentProvider(
  config: PaymentsConfig,
  dataDir: string,
  logger: { log(message: string): void; debug(message: string): void },
  webhookUrl?: string,
): Promise<PaymentProviderHandle> {
  if (config.provider.url !== undefined) return { config, sandbox: undefined };
  const sandboxDir = join(dataDir, 'provider-sandbox');
  logger.log(`PAYMENT_PROVIDER_URL not set: starting the provider sandbox under ${sandboxDir}/`);
  const sandbox = await startProviderSandbox({
    dataDir: sandboxDir,
    webhookSecret: config.provider.webhookSecret,
    webhookUrl,
    faults: config.sandbox.faults,
    env:
      config.sandbox.payoutIntervalMs === undefined
        ? undefined
        : { PROVIDER_SANDBOX_PAYOUT_INTERVAL_MS: String(config.sandbox.payoutIntervalMs) },
    onOutput: (line) => logger.debug(`provider sandbox: ${line}`),
  });
  return {
    config: {
      ...config,
      provider: { url: sandbox.url, apiKey: sandbox.apiKey, webhookSecret: sandbox.webhookSecret },
    },
    sandbox,
  };
}
