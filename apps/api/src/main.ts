import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { DatabaseModule, prepareDatabase } from '@ledgerkey/database';
import { JobRunner } from '@ledgerkey/jobs';
import { preparePaymentProvider } from '@ledgerkey/payments';
import { ConfigError, IdleCollector, JsonLogger, stopOnSignals } from '@ledgerkey/process';
import { RevocationListener } from '@ledgerkey/tenancy';
import type { Server } from 'node:http';
import { closeHttpServer } from './close-http-server';
import { loadConfig } from './config';
import { createApp } from './create-app';
import { DATABASE_SCHEMA } from './database-schema';
import { ensureDemoCompany } from './demo-company';
import { InFlightHandlers } from './in-flight-handlers';

async function main(): Promise<void> {
  const parsed = loadConfig(process.env);
  // JSON lines from the first one: the application's own logger (the same format) takes over in createApp.
  Logger.overrideLogger(new JsonLogger(parsed.process.logLevel));
  const logger = new Logger('ledgerkey');
  const database = await prepareDatabase(parsed.database, DATABASE_SCHEMA, logger);
  // Zero setup for payments too: without PAYMENT_PROVIDER_URL the bundled provider sandbox runs
  // as this process's child, its state under DATA_DIR.
  // Its webhooks come back to this process's receiver (known once the port is: PORT=0 sends none).
  const receiverHost = parsed.host === '0.0.0.0' ? '127.0.0.1' : parsed.host;
  const webhookUrl =
    parsed.port === 0 ? undefined : `http://${receiverHost}:${parsed.port}/v1/providers/sandbox/events`;
  const provider = await preparePaymentProvider(parsed.payments, parsed.database.dataDir, logger, webhookUrl);
  const config = { ...parsed, payments: provider.config };
  const app = await createApp(config, database);
  const { embedded } = database;
  const { sandbox } = provider;
  // A stop ends within SHUTDOWN_TIMEOUT_MS whatever the database does: HTTP stops taking requests
  // and answers the in-flight ones while the job runner lets its jobs finish; then the pool
  // closes, then the embedded server stops. A step still waiting at its share of the bound is
  // given up on (e.g. a query to a database that is gone), so the next one still runs.
  stopOnSignals(
    [
      {
        until: 0.6,
        steps: [
          {
            name: 'HTTP server (in-flight requests)',
            // Then the handlers of clients that hung up, which the server's close does not wait for.
            run: () => closeHttpServer(app.getHttpServer()).then(() => app.get(InFlightHandlers).idle()),
          },
          { name: 'job runner (running jobs)', run: () => app.get(JobRunner).stop() },
        ],
      },
      {
        until: 0.8,
        steps: [
          { name: 'database pool', run: () => app.get(DatabaseModule).close() },
          { name: 'API key revocation listener', run: () => app.get(RevocationListener).stop() },
          ...(sandbox ? [{ name: 'provider sandbox', run: () => sandbox.stop().then(() => undefined) }] : []),
        ],
      },
      { until: 1, steps: embedded ? [{ name: 'embedded PostgreSQL', run: () => embedded.stop() }] : [] },
    ],
    { timeoutMs: config.process.shutdownTimeoutMs, logger },
  );
  await app.listen(config.port, config.host);
  collectWhenIdle(app.getHttpServer() as Server, config.idleGcAfterMs, logger);
  // Zero-setup: the job worker (webhook delivery) runs in this process unless RUN_WORKER=false.
  if (config.runWorker) {
    await app.get(JobRunner).start({ connectionString: database.url, concurrency: config.jobs.concurrency });
    logger.log(
      `job worker started in this process (RUN_WORKER=true, concurrency ${config.jobs.concurrency}): ` +
        'webhook deliveries, payment recovery, idempotency key purge',
    );
  }
  const baseUrl = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${(app.getHttpServer().address() as { port: number }).port}`;

  const demo = config.seedDemoCompany ? await ensureDemoCompany(app) : null;
  const lines = [
    `ledgerkey listening on ${baseUrl}`,
    `  Swagger UI:   ${baseUrl}/docs`,
    `  OpenAPI:      ${baseUrl}/docs/openapi.json`,
    `  Health:       ${baseUrl}/health/ready`,
    sandbox
      ? `  Payments:     provider sandbox at ${sandbox.url} (state in ${sandbox.dataDir})`
      : `  Payments:     provider at ${config.payments.provider.url}`,
  ];
  if (demo) {
    lines.push(
      `  Demo company: ${demo.companyId}`,
      `  Demo API key: ${demo.apiKey}   (shown once; only its hash is stored)`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** After a burst of requests, one full collection gives the garbage back (IdleCollector, IDLE_GC_AFTER_MS). */
function collectWhenIdle(server: Server, quietMs: number, logger: Logger): void {
  if (quietMs === 0) return;
  const collect = IdleCollector.fullCollection();
  const idle = new IdleCollector({
    quietMs,
    collect: () => {
      const started = performance.now();
      const heapBefore = process.memoryUsage().heapUsed;
      collect();
      const mb = (bytes: number) => Math.round(bytes / 1_048_576);
      const after = process.memoryUsage();
      logger.debug(
        `idle collection: ${Math.round(performance.now() - started)} ms, heap ${mb(heapBefore)} → ` +
          `${mb(after.heapUsed)} MB of ${mb(after.heapTotal)}, external ${mb(after.external)} MB, RSS ${mb(after.rss)} MB`,
      );
    },
  });
  server.on('request', () => idle.noteActivity());
  idle.start();
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `ledgerkey failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
