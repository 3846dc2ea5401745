import { type DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { LogLevel } from '@ledgerkey/process';
import { createRootLogger, requestLogger } from './request-logging';

/** The request-logging middleware (pino-http), the request pipeline's first (request-pipeline.ts). */
export const REQUEST_LOGGER = Symbol('REQUEST_LOGGER');

/**
 * One pino logger per application: Nest's `Logger` writes through it (nestjs-pino), and so does
 * the request logger. `useExisting`: nestjs-pino does not mount pino-http itself (as Nest
 * middleware it would run after the body parser and miss the requests that parser refuses); it
 * only makes `req.log` the logger of Nest's `Logger` calls made while handling a request, so
 * those lines carry the request id too.
 */
@Module({})
export class LoggingModule {
  static forRoot(logLevel: LogLevel): DynamicModule {
    const logger = createRootLogger(logLevel);
    return {
      module: LoggingModule,
      imports: [LoggerModule.forRoot({ pinoHttp: { logger, wrapSerializers: false }, useExisting: true })],
      providers: [{ provide: REQUEST_LOGGER, useValue: requestLogger(logger) }],
      exports: [REQUEST_LOGGER],
    };
  }
}
