import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { ClsServiceManager } from 'nestjs-cls';

const CLIENT_REQUEST_ID = /^[\x21-\x7E]{1,100}$/;

/** Honour a sane client-sent X-Request-Id (for correlating logs); otherwise make one. */
export function newRequestId(request: Request): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : `req_${randomUUID()}`;
}

/**
 * The id of the current request. Requests refused before routing (e.g. by the body parser)
 * have no request context yet; they get an id here.
 */
export function requestIdOf(request: Request): string {
  const cls = ClsServiceManager.getClsService();
  const id = cls.isActive() ? cls.getId() : undefined;
  return id ?? newRequestId(request);
}
