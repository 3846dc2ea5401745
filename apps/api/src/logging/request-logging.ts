import { authenticatedCompanyOf } from '@ledgerkey/tenancy';
import { idempotentRequestOf } from '@ledgerkey/idempotency';
import { jsonLogOptions, type LogLevel } from '@ledgerkey/process';
import type { Request, RequestHandler, Response } from 'express';
import { pino, stdSerializers, type Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { requestIdFor } from '../request-id';

/**
 * The process's JSON logger. Serializers whitelist what a request, response or error shows, so
 * headers (Authorization included) and bodies never reach a log line; `redact` also covers
 * headers logged by hand. Written to process.stdout, the stream main.ts prints its banner to,
 * so the two stay in order.
 */
export function createRootLogger(logLevel: LogLevel): Logger {
  return pino(
    {
      ...jsonLogOptions(logLevel),
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

/** Scrapes, probes and the Swagger UI's pages and assets, answered: logged at debug, not info. */
const ROUTINE_PATHS = /^\/(metrics|health\/(live|ready)|docs)(\/|$)/;

function isRoutine(request: Request, response: Response): boolean {
  const path = (request.originalUrl ?? request.url).split('?', 1)[0];
  return (
    (request.method === 'GET' || request.method === 'HEAD') &&
    response.statusCode < 400 &&
    ROUTINE_PATHS.test(path)
  );
}

/**
 * One `info` line per request when its response is finished (or the client went away) — `debug` for
 * routine ones (metrics scrapes, health probes, the Swagger UI and its assets, when answered) — with the
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
    customLogLevel: (request, response) => (isRoutine(request, response) ? 'debug' : 'info'),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
    customSuccessObject: (request, _response, value: { res: Response; responseTime: number }) =>
      line(request, value),
    customErrorObject: (request, _response, _error, value: { res: Response; responseTime: number }) =>
      line(request, value),
  });
}
