import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { ConfigError, loadConfig, type AppConfig } from '../../api/src/config';
import { prepareDatabase } from '../../api/src/database-bootstrap';
import { stopOnSignals } from '../../api/src/shutdown';
import { JobRunner } from './job-runner';
import { jobRunnerOptionsOf } from './worker-config';
import { WorkerModule } from './worker.module';

function logLevels(level: AppConfig['logLevel']): Array<'error' | 'warn' | 'log' | 'debug'> {
  const order = ['error', 'warn', 'log', 'debug'] as const;
  return order.slice(0, order.indexOf(level) + 1);
}

/**
 * The standalone worker (`node dist/apps/worker/src/main.js`): delivers webhooks; run as many
 * as needed next to the API (RUN_WORKER=false there, or not). Needs DATABASE_URL: the embedded
 * database belongs to the API process, which runs its own worker.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  if (config.databaseUrl === undefined) {
    throw new ConfigError([
      'DATABASE_URL must be set for the standalone worker (npm start runs a worker inside the API instead)',
    ]);
  }
  Logger.overrideLogger(logLevels(config.logLevel));
  const logger = new Logger('ledgerkey-worker');
  const database = await prepareDatabase(config, logger);
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, database), {
    logger: logLevels(config.logLevel),
  });
  // Within SHUTDOWN_TIMEOUT_MS whatever the database does: running jobs may finish, then the pool
  // closes; a step still waiting at its share of the bound is given up on.
  stopOnSignals(
    [
      { until: 0.8, steps: [{ name: 'job runner (running jobs)', run: () => app.get(JobRunner).stop() }] },
      { until: 1, steps: [{ name: 'database pool', run: () => app.get(DataSource).destroy() }] },
    ],
    { timeoutMs: config.shutdownTimeoutMs, logger },
  );
  await app.get(JobRunner).start(jobRunnerOptionsOf(config, database.url));
  process.stdout.write(
    `ledgerkey worker started (pid ${process.pid}, concurrency ${config.workerConcurrency})\n`,
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
