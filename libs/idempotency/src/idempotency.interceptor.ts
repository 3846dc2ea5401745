import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { TransactionHost, isUniqueViolation, type TypeOrmTransactionalAdapter } from '@ledgerkey/database';
import type { Request, Response } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { fingerprintOf } from './fingerprint';
import { parseIdempotencyKey } from './idempotency-key';
import {
  IdempotencyKeyInUseError,
  IdempotencyKeyInvalidError,
  IdempotencyKeyMissingError,
  IdempotencyKeyReusedError,
} from './idempotency.errors';
import {
  IDEMPOTENCY_OBSERVER,
  type IdempotencyObserver,
  type IdempotencyOutcome,
} from './idempotency.observer';
import {
  IDEMPOTENCY_OPTIONS,
  type FingerprintSource,
  type IdempotencyModuleOptions,
  type RecordedResponse,
} from './idempotency.options';
import {
  type IdempotencyKeyRef,
  type IdempotencyRecord,
  IdempotencyRecordRepository,
} from './idempotency-record.repository';
import {
  IDEMPOTENT_REQUEST,
  IDEMPOTENT_ROUTE,
  VALIDATED_BODY,
  type IdempotentRequest,
  type IdempotentRouteOptions,
} from './idempotent-route';
import { RecordedResponseReplay } from './recorded-response';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

type IdempotentHttpRequest = Request & {
  [VALIDATED_BODY]?: object;
  [IDEMPOTENT_REQUEST]?: IdempotentRequest;
};

/** What one keyed transaction produced: the response to send and how it came about. */
interface KeyedResult {
  recorded: RecordedResponse;
  expiresAt: Date;
  outcome: Extract<IdempotencyOutcome, 'executed' | 'replayed' | 'business_rejection'>;
}

/**
 * Runs an `@Idempotent` route:
 * 1. header and body are checked first; failing either stores nothing (400);
 * 2. one transaction: per-key lock (busy → 409 + Retry-After), look up the key
 *    (same fingerprint → replay, other fingerprint → 422), execute the operation, store the
 *    response, commit;
 * 3. a business rejection rolls that transaction back and is stored in a second one (see
 *    `recordRejection`); anything else rolls back everything and leaves no trace.
 * Each request's outcome goes to the observer; the request is annotated for `idempotentRequestOf`.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly records: IdempotencyRecordRepository,
    private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyModuleOptions,
    @Inject(IDEMPOTENCY_OBSERVER) private readonly observer: IdempotencyObserver,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const route = this.reflector.get<IdempotentRouteOptions>(IDEMPOTENT_ROUTE, context.getHandler());
    const http = context.switchToHttp();
    const request = http.getRequest<IdempotentHttpRequest>();
    request[IDEMPOTENT_REQUEST] = { operation: route.operation };
    const body = this.run(route, request, http.getResponse<Response>(), next).catch((error: unknown) => {
      const refusal = refusalOutcomeOf(error);
      if (refusal) this.observer.observe(route.operation, refusal);
      throw error;
    });
    return from(body);
  }

  private async run(
    route: IdempotentRouteOptions,
    request: IdempotentHttpRequest,
    response: Response,
    next: CallHandler,
  ): Promise<string> {
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    request[IDEMPOTENT_REQUEST] = { operation: route.operation, key };
    const body = await this.options.validateBody(request.body, route.body);
    request[VALIDATED_BODY] = body;
    if (this.options.benchmarkBypass === true) return this.runWithoutIdempotency(response, next);
    const scope = this.options.resolveScope(request);
    const ref: IdempotencyKeyRef = { tenantId: scope.tenantId, operation: route.operation, key };
    const fingerprint = fingerprintOf(
      isFingerprintSource(body) ? body.fingerprintPayload(scope.context) : body,
    );

    const result = await this.txHost
      .withTransaction(async (): Promise<KeyedResult> => {
        const claim = await this.records.claim(ref);
        if (!claim.locked) throw new IdempotencyKeyInUseError();
        if (claim.record) return replayOf(claim.record, fingerprint);
        const recorded = await this.execute(route, request, next);
        const expiresAt = this.expiry();
        await this.records.insert(ref, fingerprint, recorded, expiresAt);
        return { recorded, expiresAt, outcome: 'executed' };
      })
      .catch((error: unknown) => {
        // The whole transaction rolled back: the rejection is stored in a second one.
        if (error instanceof BusinessRejection) return this.recordRejection(ref, fingerprint, error.recorded);
        throw keyConflictOf(error);
      });
    // After the commit: an outcome that wrote is only reported once it is durable.
    this.observer.observe(route.operation, result.outcome);

    const replayed = result.outcome === 'replayed';
    const headers: Record<string, string> = {
      ...result.recorded.headers,
      'Idempotency-Key-Expires': result.expiresAt.toUTCString(),
    };
    if (replayed) headers['Idempotent-Replayed'] = 'true';
    if (replayed || result.recorded.status !== route.status) {
      // Nest would overwrite the status with the route's own; the exception filter writes
      // recorded responses verbatim instead.
      throw new RecordedResponseReplay({ ...result.recorded, headers });
    }
    response.set(headers);
    response.type(JSON_CONTENT_TYPE);
    return result.recorded.body;
  }

  /**
   * Benchmark only (BENCHMARK_DISABLE_IDEMPOTENCY): the same validated body and handler in a plain
   * transaction, with no lock, lookup or stored record, so `npm run bench` can measure what the
   * idempotency layer costs. Never enabled in a deployment.
   */
  private async runWithoutIdempotency(response: Response, next: CallHandler): Promise<string> {
    const result: unknown = await this.txHost.withTransaction(() => lastValueFrom(next.handle()));
    response.type(JSON_CONTENT_TYPE);
    return JSON.stringify(result);
  }

  /**
   * Runs the operation in the key's transaction. A business rejection (a known domain error)
   * becomes a `BusinessRejection`, which rolls the transaction back — undoing any partial
   * writes, such as a number taken before the conflict was found — and is then stored by
   * `recordRejection`. Anything else propagates and leaves no trace.
   */
  private async execute(
    route: IdempotentRouteOptions,
    request: Request,
    next: CallHandler,
  ): Promise<RecordedResponse> {
    let result: unknown;
    try {
      result = await lastValueFrom(next.handle());
    } catch (error) {
      const rejection = this.options.renderOutcome(error, request);
      throw rejection === null ? error : new BusinessRejection(rejection, error);
    }
    const headers: Record<string, string> = {};
    if (route.location) headers.Location = route.location(result);
    return { status: route.status, headers, body: JSON.stringify(result) };
  }

  /**
   * Stores a business rejection under the key, in a transaction of its own. Between the
   * rolled-back execution and this claim the key was free: if another request with the same
   * key and payload executed meanwhile, its answer is the key's answer and is returned (this
   * request's execution left no trace, so there was still exactly one); if it is still
   * running, 409 as for any concurrent duplicate.
   */
  private recordRejection(
    ref: IdempotencyKeyRef,
    fingerprint: Buffer,
    rejection: RecordedResponse,
  ): Promise<KeyedResult> {
    return this.txHost
      .withTransaction(async (): Promise<KeyedResult> => {
        const claim = await this.records.claim(ref);
        if (!claim.locked) throw new IdempotencyKeyInUseError();
        if (claim.record) return replayOf(claim.record, fingerprint);
        const expiresAt = this.expiry();
        await this.records.insert(ref, fingerprint, rejection, expiresAt);
        return { recorded: rejection, expiresAt, outcome: 'business_rejection' };
      })
      .catch((error: unknown) => {
        throw keyConflictOf(error);
      });
  }

  private expiry(): Date {
    return new Date(Date.now() + this.options.ttlSeconds * 1000);
  }
}

/** A business outcome of the operation, carried out of its transaction so that it rolls back. */
class BusinessRejection extends Error {
  constructor(
    readonly recorded: RecordedResponse,
    cause: unknown,
  ) {
    super('business rejection', { cause });
  }
}

/** The stored answer for a claimed key, or 422 when the key was used with another payload. */
function replayOf(record: IdempotencyRecord, fingerprint: Buffer): KeyedResult {
  if (!record.fingerprint.equals(fingerprint)) throw new IdempotencyKeyReusedError();
  return { recorded: record.response, expiresAt: record.expiresAt, outcome: 'replayed' };
}

/**
 * Losing the race on the key's primary key (e.g. an advisory-lock hash collision) means another
 * request owns the key, and this one's transaction ran nothing that survives: 409 in use.
 */
function keyConflictOf(error: unknown): unknown {
  return isUniqueViolation(error, 'pk_idempotency_records')
    ? new IdempotencyKeyInUseError({ cause: error })
    : error;
}

/** The outcome of a request the idempotency layer refused; undefined for any other error. */
function refusalOutcomeOf(error: unknown): IdempotencyOutcome | undefined {
  if (error instanceof IdempotencyKeyMissingError) return 'missing_key';
  if (error instanceof IdempotencyKeyInvalidError) return 'invalid_key';
  if (error instanceof IdempotencyKeyReusedError) return 'payload_mismatch';
  if (error instanceof IdempotencyKeyInUseError) return 'in_flight';
  return undefined;
}

function isFingerprintSource(value: object): value is FingerprintSource {
  return typeof (value as Partial<FingerprintSource>).fingerprintPayload === 'function';
}
