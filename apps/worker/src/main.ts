import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DatabaseModule, prepareDatabase } from '@ledgerkey/database';
import { installJobQueue, JobRunner } from '@ledgerkey/jobs';
import { ConfigError, JsonLogger, stopOnSignals } from '@ledgerkey/process';
import { MIGRATIONS } from '../../../migrations';
import { loadConfig } from './config';
import { WorkerModule } from './worker.module';

/**
 * The standalone worker (`node dist/apps/worker/src/main.js`): delivers webhooks; run as many
 * as needed next to the API (RUN_WORKER=false there, or not). Needs DATABASE_URL: the embedded
 * database belongs to the API process, which runs its own worker.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  // The API's log format: JSON lines on stdout.
  const jsonLogger = new JsonLogger(config.process.logLevel);
  Logger.overrideLogger(jsonLogger);
  const logger = new Logger('ledgerkey-worker');
  // Migrations, then the job queue's schema: whichever process boots first installs them.
  const database = await prepareDatabase(
    config.database,
    { migrations: MIGRATIONS, afterMigrations: [installJobQueue] },
    logger,
  );
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), {
    logger: jsonLogger,
  });
  // Within SHUTDOWN_TIMEOUT_MS whatever the database does: running jobs may finish, then the pool
  // closes; a step still waiting at its share of the bound is given up on.
  stopOnSignals(
    [
      { until: 0.8, steps: [{ name: 'job runner (running jobs)', run: () => app.get(JobRunner).stop() }] },
      { until: 1, steps: [{ name: 'database pool', run: () => app.get(DatabaseModule).close() }] },
    ],
    { timeoutMs: config.process.shutdownTimeoutMs, logger },
  );
  await app.get(JobRunner).start({ connectionString: database.url, concurrency: config.jobs.concurrency });
  // Printed whatever LOG_LEVEL says: what an operator (and a test) waits for.
  jsonLogger.announce(
    'ledgerkey-worker',
    `ledgerkey worker started (pid ${process.pid}, concurrency ${config.jobs.concurrency})`,
    {
      concurrency: config.jobs.concurrency,
    },
  );
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(
      `ledgerkey worker failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
  }
  process.exit(1);
});
