import type { Type } from '@nestjs/common';
import type { IdempotentOperation } from './idempotent-executor';

/** Metadata key under which `@Idempotent` stores its options on the route handler. */
export const IDEMPOTENT_ROUTE = Symbol('IDEMPOTENT_ROUTE');

/** Where the interceptor leaves the validated DTO for `@IdempotentBody()`. */
export const VALIDATED_BODY = Symbol('VALIDATED_BODY');

/** Where the interceptor leaves the operation and key of the request, for `idempotentRequestOf`. */
export const IDEMPOTENT_REQUEST = Symbol('IDEMPOTENT_REQUEST');

/** What the idempotency layer knows about a request, e.g. for request logs. */
export interface IdempotentRequest {
  operation: string;
  /** The parsed key; absent while unread, and when the header was missing or invalid. */
  key?: string;
}

/** The operation and key of an `@Idempotent` request; undefined for any other request. */
export function idempotentRequestOf(request: object): IdempotentRequest | undefined {
  return (request as { [IDEMPOTENT_REQUEST]?: IdempotentRequest })[IDEMPOTENT_REQUEST];
}

/** Notes what `idempotentRequestOf` answers for this request (whoever handles it: the interceptor, or an answer made before routing). */
export function noteIdempotentRequest(request: object, idempotent: IdempotentRequest): void {
  (request as { [IDEMPOTENT_REQUEST]?: IdempotentRequest })[IDEMPOTENT_REQUEST] = idempotent;
}

/** The options `@Idempotent` gave a route handler; undefined for any other handler. */
export function idempotentRouteOf(handler: object): IdempotentRouteOptions | undefined {
  return Reflect.getMetadata(IDEMPOTENT_ROUTE, handler) as IdempotentRouteOptions | undefined;
}

export interface IdempotentRouteOptions<TResult = unknown> extends IdempotentOperation<TResult> {
  /** The request body's DTO class: validated before the key is looked at. */
  body: Type<object>;
  /**
   * Whose keys these are. `tenant` (default): the authenticated company, from the module's
   * `resolveScope`. `operator`: operations no tenant owns (admin routes), scoped to
   * `OPERATOR_TENANT_ID`.
   */
  scope?: 'tenant' | 'operator';
  /**
   * `external`: the operation's effect happens outside the database. The handler returns an
   * `ExternalEffect` (built from the body, doing nothing yet), which the protocol prepares,
   * performs and settles (`IdempotentExecutor.executeExternal`); the answer may be `202` while
   * the outcome is unknown. Default `local`: the handler is the operation, run in the key's
   * transaction.
   */
  effect?: 'local' | 'external';
  /**
   * The `Idempotency-Key` example of the OpenAPI document, e.g. a domain key such as
   * `order-2001-invoice`; default `IDEMPOTENCY_KEY_EXAMPLE`, a random-looking UUID.
   */
  keyExample?: string;
}

/** The OpenAPI document's default `Idempotency-Key` example: any unique string will do. */
export const IDEMPOTENCY_KEY_EXAMPLE = '3f0c2a9e-7b1d-4c56-9e8a-5d2f4b6a1c3e';
