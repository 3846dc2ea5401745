import type { Type } from '@nestjs/common';
import type { Request } from 'express';
import type { IdempotencyObserver } from './idempotency.observer';
import type { Clock, OutcomeClassifier, ResponseSealer } from './idempotency-ports';
import type { ReplayCacheLimits } from './replay-cache';

export const IDEMPOTENCY_OPTIONS = Symbol('IDEMPOTENCY_OPTIONS');

/** Who is asking: keys are scoped per tenant, and tenant defaults may shape the fingerprint. */
export interface IdempotencyScope {
  tenantId: string;
  /** Passed to `FingerprintSource.fingerprintPayload` (e.g. the company's default currency). */
  context?: unknown;
}

export interface IdempotencyModuleOptions {
  /** Replay window in seconds (IDEMPOTENCY_KEY_TTL). */
  ttlSeconds: number;
  /**
   * Benchmark only: routes run their operation in a plain transaction, without the protocol
   * (`UnkeyedExecutor`), to measure its cost; a retry runs the operation again. Decided once,
   * when the module is built; BENCHMARK_DISABLE_IDEMPOTENCY, which sets it, is refused at boot
   * unless NODE_ENV=test.
   */
  benchmarkBypass?: boolean;
  /** The authenticated tenant of a request; runs after guards. Not called for operator routes. */
  resolveScope(request: Request): IdempotencyScope;
  /**
   * Validates and transforms the raw body into the route's DTO class. Must throw the
   * application's validation error: such failures happen before the operation and are
   * never stored.
   */
  validateBody(body: unknown, dto: Type<object>): Promise<object>;
  /** Tells business rejections (stored and replayed, rendered by the application) from failures. */
  classifier: OutcomeClassifier;
  /** Seals the stored answers of `sensitiveResponse` routes. Default: `IDENTITY_SEALER`. */
  sealer?: ResponseSealer;
  /**
   * Keeps replays of finished keys in the process, so a byte-identical retry needs no database
   * read (`ReplayCache`); `maxEntries` 0 keeps none. Default: none.
   */
  replayCache?: ReplayCacheLimits;
  /** Default: the system clock. */
  clock?: Clock;
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
