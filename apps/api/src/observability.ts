import type { INestApplication } from '@nestjs/common';
import type { RequestHandler } from 'express';
import { Logger } from 'nestjs-pino';
import { REQUEST_LOGGER } from './logging/logging.module';
import { HttpMetrics } from './metrics/http.metrics';

/**
 * Nest's logger becomes the JSON logger, and every request is logged and timed. Call before
 * the body parser is mounted: requests it refuses are logged and timed too.
 */
export function setupObservability(app: INestApplication): void {
  app.useLogger(app.get(Logger));
  app.use(app.get<RequestHandler>(REQUEST_LOGGER), app.get(HttpMetrics).middleware);
}
