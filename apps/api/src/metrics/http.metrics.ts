import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import type { Request, RequestHandler } from 'express';
import { Histogram, Registry } from 'prom-client';

/** The route label of requests no route matched (404s, and bodies refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route template (`/v1/sales/invoices/:id`), never the concrete path: a bounded label.
 * `req.route` is the last Express route that ran. Nest mounts middleware as wildcard routes
 * (`{/*splat}`), so a request no controller route matched ends with one of those: unmatched.
 */
export function routeLabelOf(request: Pick<Request, 'baseUrl' | 'route'>): string {
  const answered = answeredRoutes.get(request);
  if (answered !== undefined) return answered;
  const route = request.route as { path?: unknown } | undefined;
  if (typeof route?.path !== 'string' || route.path.includes('*')) return UNMATCHED_ROUTE;
  return `${request.baseUrl}${route.path}`;
}

const answeredRoutes = new WeakMap<object, string>();

/** Names the route template of a request answered before Express routed it (the replay front door). */
export function answeredByRoute(request: IncomingMessage, route: string): void {
  answeredRoutes.set(request, route);
}

export function statusClassOf(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** HTTP request latency, measured around everything the application does with a request. */
@Injectable()
export class HttpMetrics {
  private readonly duration: Histogram<'method' | 'route' | 'status_class'>;

  constructor(registry: Registry) {
    this.duration = new Histogram({
      name: 'ledgerkey_http_request_duration_seconds',
      help: 'HTTP request latency until the response is finished, by method, route template and status class.',
      labelNames: ['method', 'route', 'status_class'],
      registers: [registry],
    });
  }

  /** Mounted before the body parser, so refused bodies are measured too. */
  readonly middleware: RequestHandler = (request, response, next) => {
    this.time(request, response, () => routeLabelOf(request));
    next();
  };

  /** Times a request until its response closes; `routeOf` names its route template then. */
  time(request: IncomingMessage, response: ServerResponse, routeOf: () => string): void {
    const end = this.duration.startTimer();
    response.once('close', () =>
      end({
        method: request.method,
        route: routeOf(),
        status_class: statusClassOf(response.statusCode),
      }),
    );
  }
}
