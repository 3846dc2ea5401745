import { authenticatedCompanyOf } from '@ledgerkey/tenancy';
import { idempotentRequestOf } from '@ledgerkey/idempotency';
import type { LogLevel } from '@ledgerkey/process';
import type { Request, RequestHandler, Response } from 'express';
import { pino, stdSerializers, type Level, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { requestIdFor } from '../request-id';

const PINO_LEVELS: Record<LogLevel, Level> = {
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
};

/** LOG_LEVEL (Nest's names) as a pino level: `log` is pino's `info`. */
export function pinoLevelOf(logLevel: LogLevel): Level {
  return PINO_LEVELS[logLevel];
}

/**
 * The process's JSON logger. Serializers whitelist what a request, response or error shows, so
 * headers (Authorization included) and bodies never reach a log line; `redact` also covers
 * headers logged by hand. Written to process.stdout, the stream main.ts prints its banner to,
 * so the two stay in order.
 */
export function createRootLogger(logLevel: LogLevel): Logger {
  return pino(
    {
      level: pinoLevelOf(logLevel),
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: {
        req: (request: Request & { id?: unknown }) => ({
          id: request.id,
          method: request.method,
          url: request.originalUrl ?? request.url,
        }),
        res: (response: Response) => ({ statusCode: response.statusCode }),
        err: errorForLog,
      },
      redact: {
        paths: ['headers.authorization', '*.headers.authorization', 'req.headers.authorization'],
        censor: '[redacted]',
      },
    },
    process.stdout,
  );
}

/**
 * Type, message and stack (both with the `cause` chain appended) and a string `code`. Not the
 * other enumerable fields: a database error carries the statement's parameters, i.e. bodies.
 */
export function errorForLog(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const { type, message, stack } = stdSerializers.err(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? { type, message, stack, code } : { type, message, stack };
}

/** What a request line says beyond method, URL, status and duration. */
export function requestLogFields(request: Request): Record<string, string | undefined> {
  const idempotent = idempotentRequestOf(request);
  return {
    companyId: authenticatedCompanyOf(request)?.id,
    operation: idempotent?.operation,
    idempotencyKey: idempotent?.key,
  };
}

/**
 * One `info` line per request when its response is finished (or the client went away), with the
 * request id the rest of the application uses (X-Request-Id, problem bodies). 5xx are logged
 * once more, with their cause, by the problem+json filter: the request line carries no error.
 */
export function requestLogger(logger: Logger): RequestHandler {
  const line = (request: Request, value: { res: Response; responseTime: number }) => ({
    ...requestLogFields(request),
    res: value.res,
    responseTime: value.responseTime,
  });
  return pinoHttp<Request, Response>({
    logger,
    // The root logger's serializers, not pino-http's defaults (which would log every header).
    wrapSerializers: false,
    genReqId: requestIdFor,
    customLogLevel: () => 'info',
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
    customSuccessObject: (request, _response, value: { res: Response; responseTime: number }) =>
      line(request, value),
    customErrorObject: (request, _response, _error, value: { res: Response; responseTime: number }) =>
      line(request, value),
  });
}
