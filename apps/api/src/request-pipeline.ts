import type { INestApplication } from '@nestjs/common';
import type { RequestHandler } from 'express';
import { ClsMiddleware } from 'nestjs-cls';
import type { ApiConfig } from './config';
import { jsonBody } from './json-body';
import { REQUEST_LOGGER } from './logging/logging.module';
import { HttpMetrics } from './metrics/http.metrics';
import { pathParameterDecoding } from './path-parameters';
import { requestIdFor } from './request-id';

/**
 * What a replay answered by the replay front door does about one middleware of the pipeline:
 * runs it (a middleware that only observes and calls `next` at once), or meets it otherwise, and
 * says how. The front door refuses to install when the application has a middleware that is not
 * in this list (see `ReplayFrontDoor.install`).
 */
export type OnReplay = { run: true } | { run: false; because: string };

export interface PipelineMiddleware {
  name: string;
  handler: RequestHandler;
  onReplay: OnReplay;
}

/**
 * The application's middleware, in order: the one list that `createApp` mounts and the replay
 * front door checks itself against. Logging and timing come first, so that requests the body
 * parser refuses are logged and timed too; the request context (nestjs-cls: the request id, the
 * transaction host) last, as every route's first step.
 */
export function requestPipeline(app: INestApplication, config: ApiConfig): PipelineMiddleware[] {
  return [
    { name: 'request log', handler: app.get<RequestHandler>(REQUEST_LOGGER), onReplay: { run: true } },
    { name: 'request timing', handler: app.get(HttpMetrics).middleware, onReplay: { run: true } },
    {
      name: 'path parameter decoding',
      handler: pathParameterDecoding(),
      onReplay: {
        run: false,
        because: 'the front door answers only the exact path of a route: nothing to decode',
      },
    },
    {
      name: 'JSON body',
      handler: jsonBody(config.requestBodyLimitBytes),
      onReplay: {
        run: false,
        because:
          'the front door reads the body itself: a JSON, UTF-8, uncompressed body within the same limit, compared by the digest of its exact bytes, as the route compares it',
      },
    },
    {
      name: 'request context',
      handler: requestContext().use,
      onReplay: {
        run: false,
        because: 'the front door sets the same X-Request-Id (requestIdFor); a replay opens no transaction',
      },
    },
  ];
}

/** The nestjs-cls context of a request: its id (also the X-Request-Id header) and its transaction host. */
function requestContext(): ClsMiddleware {
  return new ClsMiddleware({
    generateId: true,
    idGenerator: requestIdFor,
    setup: (cls, _request, response: { setHeader(name: string, value: string): void }) =>
      response.setHeader('X-Request-Id', cls.getId()),
  });
}
