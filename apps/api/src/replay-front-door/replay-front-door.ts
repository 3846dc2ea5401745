import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger, RequestMethod, type Type } from '@nestjs/common';
import {
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
} from '@nestjs/common/constants';
import { DiscoveryService } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  CachedReplays,
  IdempotencyInterceptor,
  type IdempotentRouteOptions,
  idempotentRouteOf,
  noteIdempotentRequest,
  parseIdempotencyKey,
  requestDigestOf,
  sendRecordedResponse,
} from '@ledgerkey/idempotency';
import { ApiKeyGuard } from '@ledgerkey/tenancy';
import type { RequestHandler } from 'express';
import { API_CONFIG, type ApiConfig } from '../config';
import { answeredByRoute } from '../metrics/http.metrics';
import { requestIdFor } from '../request-id';
import type { PipelineMiddleware } from '../request-pipeline';
import { unknownOnReplay } from './front-door-coverage';
import { peekBody } from './peek-body';

/** An `@Idempotent` route the front door may answer: its path is the key of the table. */
interface FrontDoorRoute {
  path: string;
  operation: IdempotentRouteOptions;
}

/** What a request must be for the front door to look it up; anything else is the framework's. */
interface Candidate {
  route: FrontDoorRoute;
  length: number;
  idempotencyKey: string;
  apiKey: NonNullable<ReturnType<ApiKeyGuard['recentlyVerifiedKeyOf']>>;
}

/** `application/json`, charset absent or UTF-8: the bytes the body parser digests as they are. */
const JSON_UTF8 = /^application\/json\s*(;\s*charset="?utf-8"?\s*)?$/i;

/**
 * Answers byte-identical retries of finished keys from the replay cache before Express and Nest
 * see them — the answer the `@Idempotent` route would give (its guard admitting the key, its
 * interceptor replaying), without the framework's per-request pipeline, which is most of a
 * cached replay's cost. It sits in front of the server's request listener and answers only a
 * request that is certainly such a retry:
 * - `POST` to the exact path of an `@Idempotent` tenant route whose only guard is `ApiKeyGuard`
 *   and only interceptor `IdempotencyInterceptor` (its replay branch runs before anything else
 *   of the route: pipes and handler never run for a replay);
 * - a JSON body with a Content-Length within REQUEST_BODY_LIMIT_BYTES, not compressed;
 * - a valid Idempotency-Key, and an API key this process verified recently
 *   (`ApiKeyGuard.recentlyVerifiedKeyOf`: revocations are heard as by the guard);
 * - the replay cache holds an answer of that key (checked before the body is read: a create, with
 *   a new key, goes on at once), for these exact bytes, and the company's rate limit admits the
 *   request (as the guard would: same bucket, same RateLimit headers).
 * Everything else — a miss, a refusal, a new key — goes on to Express with its body untouched
 * (`peekBody` puts the bytes back), so the framework decides exactly as without the front door.
 *
 * One request path: a replay meets what the framework's path does. The front door runs the
 * pipeline's observing middleware itself (the request log and timing: the same functions), admits
 * through the guard's own admission, and meets each other middleware and global enhancer the way
 * its declaration says (request-pipeline.ts, front-door-coverage.ts). It refuses to install — the
 * application does not start — when the application has a middleware before a route, or a global
 * guard, interceptor, pipe or filter, that it does not know.
 */
@Injectable()
export class ReplayFrontDoor {
  private readonly logger = new Logger(ReplayFrontDoor.name);
  private readonly routes: ReadonlyMap<string, FrontDoorRoute>;

  /** The pipeline's middleware a replay runs too, in order (set by `install`). */
  private observers: PipelineMiddleware[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly guard: ApiKeyGuard,
    private readonly replays: CachedReplays,
    @Inject(API_CONFIG) private readonly config: ApiConfig,
  ) {
    this.routes = frontDoorRoutes(discovery);
  }

  /** The routes answered here, by path. */
  get paths(): string[] {
    return [...this.routes.keys()];
  }

  /**
   * Puts the front door before the server's one request listener (the Express application Nest
   * created the server with), once the application is initialized. Nothing to do without a replay
   * cache: then every replay reads the database, which is the route's business.
   * @param pipeline the middleware the application mounted (`requestPipeline`)
   * @throws Error naming what a replay would skip: a global enhancer or a middleware before an
   *   answered route that the front door does not know (the application must not start)
   */
  install(app: NestExpressApplication, pipeline: PipelineMiddleware[]): void {
    if (!this.replays.enabled || this.routes.size === 0) return;
    const unknown = unknownOnReplay(app, this.discovery, pipeline, this.paths);
    if (unknown.length > 0) {
      throw new Error(
        `the replay front door cannot answer replays the way the application would: ${unknown.join('; ')}. ` +
          'Declare how a replay meets each (request-pipeline.ts, front-door-coverage.ts), or add it to the routes it concerns',
      );
    }
    this.observers = pipeline.filter((middleware) => middleware.onReplay.run);
    const server = app.getHttpServer();
    const listeners = server.listeners('request') as RequestListener[];
    if (listeners.length !== 1) {
      throw new Error(`the replay front door expects one request listener, found ${listeners.length}`);
    }
    const [application] = listeners;
    server.removeListener('request', application);
    server.on('request', (request: IncomingMessage, response: ServerResponse) =>
      this.handle(request, response, application),
    );
  }

  private handle(request: IncomingMessage, response: ServerResponse, next: RequestListener): void {
    const candidate = this.candidateOf(request);
    if (!candidate) {
      next(request, response);
      return;
    }
    peekBody(request, candidate.length)
      .then((bytes) => {
        if (!bytes || !this.answer(request, response, candidate, bytes)) next(request, response);
      })
      .catch((error: unknown) => {
        this.logger.error({ err: error }, 'replay front door failed; the request goes on to the application');
        if (response.headersSent) response.destroy();
        else next(request, response);
      });
  }

  private candidateOf(request: IncomingMessage): Candidate | undefined {
    if (request.method !== 'POST') return undefined;
    const route = this.routes.get(request.url ?? '');
    if (!route) return undefined;
    const { headers } = request;
    const length = Number(headers['content-length']);
    if (
      !(length > 0 && length <= this.config.requestBodyLimitBytes) ||
      headers['transfer-encoding'] !== undefined ||
      (headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity' ||
      !JSON_UTF8.test(headers['content-type'] ?? '')
    ) {
      return undefined;
    }
    const idempotencyKey = keyOf(headers['idempotency-key']);
    const apiKey = idempotencyKey === undefined ? undefined : this.guard.recentlyVerifiedKeyOf(request);
    if (idempotencyKey === undefined || apiKey === undefined) return undefined;
    const candidate = { route, length, idempotencyKey, apiKey };
    // A key the cache does not hold (a create, nearly always) goes on without its body being read.
    return this.replays.holds(knownKeyOf(candidate)) ? candidate : undefined;
  }

  /** Sends the cached replay; false (nothing sent, nothing taken) when there is none to send. */
  private answer(
    request: IncomingMessage,
    response: ServerResponse,
    candidate: Candidate,
    bytes: Buffer,
  ): boolean {
    const { route, idempotencyKey, apiKey } = candidate;
    const replay = this.replays.find(
      { ...knownKeyOf(candidate), requestDigest: requestDigestOf(bytes) },
      () => {
        // In the route's order: the request id (first header of every answer), then the guard's.
        response.setHeader('X-Request-Id', requestIdFor(request));
        return this.guard.admitRecentlyVerified(request, response, apiKey);
      },
    );
    if (!replay) return false;
    noteIdempotentRequest(request, { operation: route.operation.operation, key: idempotencyKey });
    answeredByRoute(request, route.path);
    for (const { name, handler } of this.observers) runAtOnce(name, handler, request, response);
    sendRecordedResponse(response, replay);
    return true;
  }
}

/**
 * Runs an observing middleware as Express would, requiring it to pass the request on at once: one
 * that does not is not an observer, and the replay must not be sent around it.
 */
function runAtOnce(
  name: string,
  handler: RequestHandler,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  let passed = false;
  handler(
    request as Parameters<RequestHandler>[0],
    response as Parameters<RequestHandler>[1],
    (error?: unknown) => {
      if (error !== undefined) throw error;
      passed = true;
    },
  );
  if (!passed) throw new Error(`the ${name} middleware did not pass the request on at once`);
}

/** The key of a candidate as the idempotency layer names it: tenant, operation, key. */
function knownKeyOf({ route, idempotencyKey, apiKey }: Candidate) {
  return { operation: route.operation, tenantId: apiKey.company.id, key: idempotencyKey };
}

function keyOf(header: string | string[] | undefined): string | undefined {
  try {
    return parseIdempotencyKey(header);
  } catch {
    return undefined;
  }
}

/**
 * The `@Idempotent` routes the front door may answer, by path: `POST`, tenant scope, guarded by
 * `ApiKeyGuard` alone and intercepted by `IdempotencyInterceptor` alone. A route with any other
 * guard or interceptor is left to the framework (the front door would skip them).
 */
function frontDoorRoutes(discovery: DiscoveryService): Map<string, FrontDoorRoute> {
  const routes = new Map<string, FrontDoorRoute>();
  for (const { metatype } of discovery.getControllers()) {
    if (typeof metatype !== 'function') continue;
    const controller = metatype as Type<unknown>;
    if (!onlyThis(GUARDS_METADATA, controller, ApiKeyGuard) || !onlyThis(INTERCEPTORS_METADATA, controller)) {
      continue;
    }
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = prototype[name];
      if (name === 'constructor' || typeof handler !== 'function') continue;
      const operation = idempotentRouteOf(handler);
      if (
        !operation ||
        operation.scope === 'operator' ||
        Reflect.getMetadata(METHOD_METADATA, handler) !== RequestMethod.POST ||
        !onlyThis(GUARDS_METADATA, handler) ||
        !onlyThis(INTERCEPTORS_METADATA, handler, IdempotencyInterceptor)
      ) {
        continue;
      }
      const path = pathOf(
        Reflect.getMetadata(PATH_METADATA, controller),
        Reflect.getMetadata(PATH_METADATA, handler),
      );
      routes.set(path, { path, operation });
    }
  }
  return routes;
}

/** Whether the enhancers `key` names on `target` are exactly `expected` (none when omitted). */
function onlyThis(key: string, target: object, expected?: unknown): boolean {
  const enhancers = (Reflect.getMetadata(key, target) as unknown[] | undefined) ?? [];
  return expected === undefined
    ? enhancers.length === 0
    : enhancers.length === 1 && enhancers[0] === expected;
}

/** `/v1/sales/invoices` + `create` → `/v1/sales/invoices/create`, as Express routes it. */
function pathOf(...parts: unknown[]): string {
  const segments = parts.flatMap((part) => (typeof part === 'string' ? part.split('/') : []));
  return `/${segments.filter((segment) => segment !== '').join('/')}`;
}
