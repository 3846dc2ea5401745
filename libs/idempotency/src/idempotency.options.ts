import type { Type } from '@nestjs/common';
import type { Request } from 'express';
import type { IdempotencyObserver } from './idempotency.observer';

export const IDEMPOTENCY_OPTIONS = Symbol('IDEMPOTENCY_OPTIONS');

/** A response as it is stored and replayed: status, the headers worth replaying, exact body. */
export interface RecordedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Who is asking: keys are scoped per tenant, and tenant defaults may shape the fingerprint. */
export interface IdempotencyScope {
  tenantId: string;
  /** Passed to `FingerprintSource.fingerprintPayload` (e.g. the company's default currency). */
  context?: unknown;
}

export interface IdempotencyModuleOptions {
  /** Replay window in seconds (IDEMPOTENCY_KEY_TTL). */
  ttlSeconds: number;
  /** Benchmark only: run routes without the idempotency layer to measure its cost. */
  benchmarkBypass?: boolean;
  /** The authenticated tenant of a request; runs after guards. */
  resolveScope(request: Request): IdempotencyScope;
  /**
   * Validates and transforms the raw body into the route's DTO class. Must throw the
   * application's validation error: such failures happen before the operation and are
   * never stored.
   */
  validateBody(body: unknown, dto: Type<object>): Promise<object>;
  /**
   * Renders an error raised while executing the operation. Returns the response to store and
   * replay for business outcomes (known domain errors), or `null` for failures that must leave
   * no trace (unexpected errors, 5xx), which are rethrown after the rollback.
   */
  renderOutcome(error: unknown, request: Request): RecordedResponse | null;
  /** Told every request's outcome and every purge (for metrics). Default: observes nothing. */
  observer?: IdempotencyObserver;
}

/**
 * Implemented by DTOs whose fingerprint needs normalization beyond what validation does, e.g.
 * filling a tenant default so that omitting a field and sending its default are one payload.
 */
export interface FingerprintSource {
  fingerprintPayload(context: unknown): unknown;
}
