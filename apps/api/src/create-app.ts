import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import type { AppConfig } from './config';
import type { DatabaseHandle } from './database-bootstrap';
import { jsonBody } from './json-body';
import { setupObservability } from './observability';
import { setupOpenApi } from './openapi';
import { pathParameterDecoding } from './path-parameters';

/** The HTTP application exactly as production runs it (tests use this too). */
export async function createApp(
  config: AppConfig,
  database: DatabaseHandle,
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, database), {
    bodyParser: false,
    logger: logLevels(config.logLevel),
    // Held until setupObservability installs the JSON logger, so boot lines are JSON too.
    bufferLogs: true,
  });
  setupObservability(app);
  app.use(pathParameterDecoding());
  app.use(jsonBody(config.requestBodyLimitBytes));
  app.disable('x-powered-by');
  setupOpenApi(app);
  return app;
}

export function logLevels(level: AppConfig['logLevel']): Array<'error' | 'warn' | 'log' | 'debug'> {
  const order = ['error', 'warn', 'log', 'debug'] as const;
  return order.slice(0, order.indexOf(level) + 1);
}
