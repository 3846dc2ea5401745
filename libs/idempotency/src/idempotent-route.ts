import type { Type } from '@nestjs/common';

/** Metadata key under which `@Idempotent` stores its options on the route handler. */
export const IDEMPOTENT_ROUTE = Symbol('IDEMPOTENT_ROUTE');

/** Where the interceptor leaves the validated DTO for `@IdempotentBody()`. */
export const VALIDATED_BODY = Symbol('VALIDATED_BODY');

export interface IdempotentRouteOptions<TResult = unknown> {
  /** The operation part of the key scope, e.g. `sales.invoices.create`. */
  operation: string;
  /** The request body's DTO class: validated before the key is looked at. */
  body: Type<object>;
  /** Status of a successful first execution (stored and replayed). */
  status: number;
  /** The `Location` of the created resource, stored and replayed with the response. */
  location?: (result: TResult) => string;
}
