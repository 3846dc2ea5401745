import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { DatabaseHandle } from '@ledgerkey/database';
import { nestLogLevels } from '@ledgerkey/process';
import { RevocationListener } from '@ledgerkey/tenancy';
import { AppModule } from './app.module';
import type { ApiConfig } from './config';
import { jsonBody } from './json-body';
import { setupObservability } from './observability';
import { setupOpenApi } from './openapi';
import { pathParameterDecoding } from './path-parameters';
import { parseQuery } from './query-parser';
import { ReplayFrontDoor } from './replay-front-door/replay-front-door';

/** The HTTP application exactly as production runs it (tests use this too). */
export async function createApp(
  config: ApiConfig,
  database: DatabaseHandle,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, database), {
    bodyParser: false,
    logger: nestLogLevels(config.process.logLevel),
    // Held until setupObservability installs the JSON logger, so boot lines are JSON too.
    bufferLogs: true,
  });
  setupObservability(app);
  app.use(pathParameterDecoding());
  app.use(jsonBody(config.requestBodyLimitBytes));
  app.disable('x-powered-by');
  app.set('query parser', parseQuery);
  setupOpenApi(app);
  // Byte-identical retries answered from the replay cache before Express and Nest see them.
  app.get(ReplayFrontDoor).install(app.getHttpServer());
  // Hears of API key revocations made through any process; stopped by app.close() or main's stop.
  await app.get(RevocationListener).start(database.url);
  return app;
}
