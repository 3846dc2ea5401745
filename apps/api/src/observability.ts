import type { INestApplication } from '@nestjs/common';
import { Logger } from 'nestjs-pino';

/**
 * Nest's logger becomes the JSON logger. Requests are logged and timed by the first middleware of
 * the request pipeline (request-pipeline.ts).
 */
export function setupObservability(app: INestApplication): void {
  app.useLogger(app.get(Logger));
}
