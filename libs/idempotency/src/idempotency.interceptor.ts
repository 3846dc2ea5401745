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
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency.errors';
import {
  IDEMPOTENCY_OPTIONS,
  type FingerprintSource,
  type IdempotencyModuleOptions,
  type RecordedResponse,
} from './idempotency.options';
import { IdempotencyRecordRepository, type IdempotencyKeyRef } from './idempotency-record.repository';
import { IDEMPOTENT_ROUTE, VALIDATED_BODY, type IdempotentRouteOptions } from './idempotent-route';
import { RecordedResponseReplay } from './recorded-response';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Runs an `@Idempotent` route:
 * 1. header and body are checked first; failing either stores nothing (400);
 * 2. one transaction: per-key lock (busy → 409 + Retry-After), look up the key
 *    (same fingerprint → replay, other fingerprint → 422), execute the operation inside a
 *    savepoint, store the response, commit;
 * 3. business rejections roll back to the savepoint and are stored like successes;
 *    anything else rolls back everything and leaves no trace.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly records: IdempotencyRecordRepository,
    private readonly txHost: TransactionHost<TypeOrmTransactionalAdapter>,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyModuleOptions,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const route = this.reflector.get<IdempotentRouteOptions>(IDEMPOTENT_ROUTE, context.getHandler());
    const http = context.switchToHttp();
    return from(this.run(route, http.getRequest<Request>(), http.getResponse<Response>(), next));
  }

  private async run(
    route: IdempotentRouteOptions,
    request: Request & { [VALIDATED_BODY]?: object },
    response: Response,
    next: CallHandler,
  ): Promise<string> {
    const key = parseIdempotencyKey(request.headers['idempotency-key']);
    const body = await this.options.validateBody(request.body, route.body);
    request[VALIDATED_BODY] = body;
    const scope = this.options.resolveScope(request);
    const ref: IdempotencyKeyRef = { tenantId: scope.tenantId, operation: route.operation, key };
    const fingerprint = fingerprintOf(
      isFingerprintSource(body) ? body.fingerprintPayload(scope.context) : body,
    );

    const outcome = await this.txHost
      .withTransaction(async () => {
        if (!(await this.records.tryLock(ref))) throw new IdempotencyKeyInUseError();
        const existing = await this.records.findLive(ref);
        if (existing) {
          if (!existing.fingerprint.equals(fingerprint)) throw new IdempotencyKeyReusedError();
          return { recorded: existing.response, expiresAt: existing.expiresAt, replayed: true };
        }
        const expiresAt = new Date(Date.now() + this.options.ttlSeconds * 1000);
        const recorded = await this.execute(route, request, next);
        await this.records.insert(ref, fingerprint, recorded, expiresAt);
        return { recorded, expiresAt, replayed: false };
      })
      .catch((error: unknown) => {
        // Lost the race on the primary key (e.g. an advisory-lock hash collision): the other
        // request owns the key; this one ran nothing that survives.
        if (isUniqueViolation(error, 'pk_idempotency_records')) {
          throw new IdempotencyKeyInUseError({ cause: error });
        }
        throw error;
      });

    const headers: Record<string, string> = {
      ...outcome.recorded.headers,
      'Idempotency-Key-Expires': outcome.expiresAt.toUTCString(),
    };
    if (outcome.replayed) headers['Idempotent-Replayed'] = 'true';
    if (outcome.replayed || outcome.recorded.status !== route.status) {
      // Nest would overwrite the status with the route's own; the exception filter writes
      // recorded responses verbatim instead.
      throw new RecordedResponseReplay({ ...outcome.recorded, headers });
    }
    response.set(headers);
    response.type(JSON_CONTENT_TYPE);
    return outcome.recorded.body;
  }

  /**
   * Executes the operation inside a savepoint so that a business rejection can undo its
   * partial writes while the key record of that rejection still commits.
   */
  private async execute(
    route: IdempotentRouteOptions,
    request: Request,
    next: CallHandler,
  ): Promise<RecordedResponse> {
    try {
      return await this.txHost.withTransaction(Propagation.Nested, async () => {
        const result: unknown = await lastValueFrom(next.handle());
        const headers: Record<string, string> = {};
        if (route.location) headers.Location = route.location(result);
        return { status: route.status, headers, body: JSON.stringify(result) };
      });
    } catch (error) {
      const recorded = this.options.renderOutcome(error, request);
      if (recorded === null) throw error;
      return recorded;
    }
  }
}

function isFingerprintSource(value: object): value is FingerprintSource {
  return typeof (value as Partial<FingerprintSource>).fingerprintPayload === 'function';
}
