import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import { ClsServiceManager } from 'nestjs-cls';

const CLIENT_REQUEST_ID = /^[\x21-\x7E]{1,100}$/;
const REQUEST_ID = Symbol('REQUEST_ID');

/**
 * The id of a request, made on first use and then kept on the request, so the request logger
 * (which asks first), the CLS context and the problem+json filter all name the same id.
 * Honours a sane client-sent X-Request-Id (for correlating logs); otherwise makes one.
 */
export function requestIdFor(request: IncomingMessage): string {
  const withId = request as IncomingMessage & { [REQUEST_ID]?: string };
  const sent = request.headers['x-request-id'];
  withId[REQUEST_ID] ??=
    typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : `req_${randomUUID()}`;
  return withId[REQUEST_ID];
}

/**
 * The id of the current request. Requests refused before routing (e.g. by the body parser)
 * have no request context yet; they get the id the request logger gave them.
 */
export function requestIdOf(request: Request): string {
  const cls = ClsServiceManager.getClsService();
  const id = cls.isActive() ? cls.getId() : undefined;
  return id ?? requestIdFor(request);
}
