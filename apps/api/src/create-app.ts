import { NestFactory } from '@nestjs/core';
import type { ModuleMetadata } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DatabaseHandle } from '@ledgerkey/database';
import { nestLogLevels } from '@ledgerkey/process';
import { RevocationListener } from '@ledgerkey/tenancy';
import { AppModule } from './app.module';
import type { ApiConfig } from './config';
import { setupObservability } from './observability';
import { setupOpenApi } from './openapi';
import { parseQuery } from './query-parser';
import { ReplayFrontDoor } from './replay-front-door/replay-front-door';
import { requestPipeline } from './request-pipeline';

export interface AppOptions {
  /**
   * Modules the application is extended with. The replay front door refuses to start an
   * application whose extensions add a global guard, interceptor, pipe or filter, or a middleware,
   * that it does not know how to meet on a replay.
   */
  extensions?: NonNullable<ModuleMetadata['imports']>;
}

/**
 * The HTTP application exactly as production runs it (tests use this too), initialized: its
 * routes registered, not listening yet.
 */
export async function createApp(
  config: ApiConfig,
  database: DatabaseHandle,
  options: AppOptions = {},
): Promise<NestExpressApplication> {
  const module = AppModule.forRoot(config, database, options.extensions);
  const app = await NestFactory.create<NestExpressApplication>(module, {
    bodyParser: false,
    logger: nestLogLevels(config.process.logLevel),
    // Held until setupObservability installs the JSON logger, so boot lines are JSON too.
    bufferLogs: true,
  });
  setupObservability(app);
  const pipeline = requestPipeline(app, config);
  for (const { handler } of pipeline) app.use(handler);
  app.disable('x-powered-by');
  app.set('query parser', parseQuery);
  setupOpenApi(app);
  // Registers the routes, the module middleware and the global enhancers, which the front door checks.
  await app.init();
  // Byte-identical retries answered from the replay cache before Express and Nest see them.
  app.get(ReplayFrontDoor).install(app, pipeline);
  // Hears of API key revocations made through any process; stopped by app.close() or main's stop.
  await app.get(RevocationListener).start(database.url);
  return app;
}
