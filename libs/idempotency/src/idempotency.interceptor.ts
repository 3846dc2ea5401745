import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import {
  Propagation,
  TransactionHost,
  isUniqueViolation,
  type TypeOrmTransactionalAdapter,
} from '@ledgerkey/database';
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
import { IdempotencyRecordRepository, type IdempotencyKeyRef } from './idempotency-record.repository';
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
 *    (same fingerprint → replay, other fingerprint → 422), execute the operation inside a
 *    savepoint, store the response, commit;
 * 3. business rejections roll back to the savepoint and are stored like successes;
 *    anything else rolls back everything and leaves no trace.
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
        const existing = claim.record;
        if (existing) {
          if (!existing.fingerprint.equals(fingerprint)) throw new IdempotencyKeyReusedError();
          return { recorded: existing.response, expiresAt: existing.expiresAt, outcome: 'replayed' };
        }
        const expiresAt = new Date(Date.now() + this.options.ttlSeconds * 1000);
        const { recorded, outcome } = await this.execute(route, request, next);
        await this.records.insert(ref, fingerprint, recorded, expiresAt);
        return { recorded, expiresAt, outcome };
      })
      .catch((error: unknown) => {
        // Lost the race on the primary key (e.g. an advisory-lock hash collision): the other
        // request owns the key; this one ran nothing that survives.
        if (isUniqueViolation(error, 'pk_idempotency_records')) {
          throw new IdempotencyKeyInUseError({ cause: error });
        }
        throw error;
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
   * Executes the operation inside a savepoint so that a business rejection can undo its
   * partial writes while the key record of that rejection still commits.
   */
  private async execute(
    route: IdempotentRouteOptions,
    request: Request,
    next: CallHandler,
  ): Promise<Pick<KeyedResult, 'recorded' | 'outcome'>> {
    try {
      return await this.txHost.withTransaction(Propagation.Nested, async () => {
        const result: unknown = await lastValueFrom(next.handle());
        const headers: Record<string, string> = {};
        if (route.location) headers.Location = route.location(result);
        const recorded = { status: route.status, headers, body: JSON.stringify(result) };
        return { recorded, outcome: 'executed' as const };
      });
    } catch (error) {
      const recorded = this.options.renderOutcome(error, request);
      if (recorded === null) throw error;
      return { recorded, outcome: 'business_rejection' };
    }
  }
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
