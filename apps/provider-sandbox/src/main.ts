import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { ConfigError, stopOnSignals } from '@ledgerkey/process';
import { acquireDataDirLock, loadOrCreateSecretFile } from './data-dir';
import { formatFaultMix } from './fault-mix';
import { IdempotencyKeys } from './idempotency-keys';
import { ProviderSandbox } from './provider-sandbox';
import { loadSandboxConfig } from './sandbox-config';
import { Faults } from './sandbox-faults';
import { createSandboxServer } from './sandbox-http';
import { SandboxLogger } from './sandbox-logger';
import { SandboxStore } from './sandbox-store';
import { freshSeed } from './seeded-random';
import { WebhookDispatcher } from './webhook-dispatcher';

/**
 * The provider sandbox (`node dist/apps/provider-sandbox/src/main.js`, `npm run start:sandbox`): a
 * small payment service provider with its own durable state, idempotency, payouts, signed webhooks
 * and fault injection. docs/provider-sandbox.md is its contract.
 */
async function main(): Promise<void> {
  const config = loadSandboxConfig(process.env);
  const logger = new SandboxLogger(config.process.logLevel);
  const dataDir = resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const releaseLock = await acquireDataDirLock(dataDir, config.lockWaitMs);
  const store = await SandboxStore.open(dataDir).catch(async (error: unknown) => {
    await releaseLock();
    throw error;
  });
  const apiKey =
    config.apiKey ??
    (await loadOrCreateSecretFile(dataDir, 'api-key', () => `sk_sandbox_${randomBytes(24).toString('hex')}`))
      .value;
  const webhookSecret =
    config.webhookSecret ??
    (
      await loadOrCreateSecretFile(
        dataDir,
        'webhook-secret',
        () => `whsec_${randomBytes(32).toString('base64')}`,
      )
    ).value;
  const seed = config.seed ?? freshSeed();
  const faults = new Faults(config.faults, seed);
  const dispatcher =
    config.webhookUrl === undefined
      ? undefined
      : new WebhookDispatcher(
          store,
          faults,
          {
            url: config.webhookUrl,
            secret: webhookSecret,
            timeoutMs: config.webhookTimeoutMs,
            retryBaseMs: config.webhookRetryBaseMs,
            retryMaxMs: config.webhookRetryMaxMs,
          },
          logger,
        );
  const sandbox = new ProviderSandbox(store, faults, {
    payoutFeeBps: config.payoutFeeBps,
    onEvent: () => dispatcher?.wake(),
  });
  const server = createSandboxServer(
    sandbox,
    store,
    new IdempotencyKeys(store),
    faults,
    { apiKey, timeoutHoldMs: config.timeoutHoldMs },
    logger,
  );
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(config.port, config.host, () => listening());
  });
  dispatcher?.start();
  const payouts =
    config.payoutIntervalMs === 0
      ? undefined
      : setInterval(() => {
          sandbox
            .runPayouts({})
            .catch((error: unknown) => logger.error(`scheduled payout failed: ${String(error)}`));
        }, config.payoutIntervalMs);

  stopOnSignals(
    [
      {
        until: 0.6,
        steps: [
          {
            name: 'HTTP server',
            run: () => {
              if (payouts) clearInterval(payouts);
              // Held requests (timeouts) are dropped: nothing of theirs was committed.
              server.closeAllConnections();
              return new Promise<void>((closed) => server.close(() => closed()));
            },
          },
          { name: 'webhook dispatcher', run: async () => dispatcher?.stop() },
        ],
      },
      {
        until: 1,
        steps: [
          {
            name: 'store',
            run: async () => {
              await store.close();
              await releaseLock();
            },
          },
        ],
      },
    ],
    { timeoutMs: config.process.shutdownTimeoutMs, logger },
  );
  if (config.exitOnStdinEnd) {
    // Started by startProviderSandbox: the parent holds our stdin; when it dies, stop like on SIGTERM.
    process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
    process.stdin.on('error', () => process.kill(process.pid, 'SIGTERM'));
    process.stdin.resume();
  }
  // A parent that died closes our output pipes: keep running (or stopping) regardless.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);

  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  process.stdout.write(
    [
      `provider sandbox listening on ${url}`,
      `  data dir:  ${dataDir} (${store.state.charges.size} charges, ${store.state.pendingEventIds.size} events pending)`,
      `  API key:   ${config.apiKey === undefined ? join(dataDir, 'api-key') : 'PROVIDER_SANDBOX_API_KEY'}`,
      `  webhooks:  ${config.webhookUrl ?? 'not sent (PROVIDER_SANDBOX_WEBHOOK_URL unset)'}`,
      `  faults:    ${formatFaultMix(config.faults) || 'none'} (seed ${seed})`,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `provider sandbox failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
