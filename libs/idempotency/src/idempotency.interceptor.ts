import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { from, lastValueFrom, type Observable } from 'rxjs';
import type { ExternalEffect } from './external-effect';
import { requestDigestOf } from './fingerprint';
import { parseIdempotencyKey } from './idempotency-key';
import { IdempotencyKeyInvalidError, IdempotencyKeyMissingError } from './idempotency.errors';
import { IDEMPOTENCY_OBSERVER, type IdempotencyObserver } from './idempotency.observer';
import {
  IDEMPOTENCY_OPTIONS,
  type FingerprintSource,
  type IdempotencyModuleOptions,
  type IdempotencyScope,
} from './idempotency.options';
import { IdempotentExecutor } from './idempotent-executor';
import { OPERATOR_TENANT_ID } from './idempotency-record';
import {
  IDEMPOTENT_ROUTE,
  VALIDATED_BODY,
  noteIdempotentRequest,
  type IdempotentRouteOptions,
} from './idempotent-route';
import { sendRecordedResponse } from './recorded-response.writer';

type IdempotentHttpRequest = Request & {
  /** The body's exact bytes, kept by the application's JSON parser (Nest's `rawBody`). */
  rawBody?: Buffer;
  [VALIDATED_BODY]?: object;
};

const OPERATOR_SCOPE: IdempotencyScope = { tenantId: OPERATOR_TENANT_ID };

/**
 * The HTTP end of an `@Idempotent` route: reads the key (400 when missing or invalid), validates
 * the body with the application's pipe (400, nothing stored), resolves the scope, hands the call
 * to the protocol (`IdempotentExecutor`) and writes its answer. Errors go to the application's
 * exception filter. The request is annotated for `idempotentRequestOf`.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly executor: IdempotentExecutor,
    @Inject(IDEMPOTENCY_OPTIONS) private readonly options: IdempotencyModuleOptions,
    @Inject(IDEMPOTENCY_OBSERVER) private readonly observer: IdempotencyObserver,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<void> {
    const route = this.reflector.get<IdempotentRouteOptions>(IDEMPOTENT_ROUTE, context.getHandler());
    const http = context.switchToHttp();
    const request = http.getRequest<IdempotentHttpRequest>();
    noteIdempotentRequest(request, { operation: route.operation });
    return from(this.handle(route, request, http.getResponse<Response>(), next));
  }

  private async handle(
    route: IdempotentRouteOptions,
    request: IdempotentHttpRequest,
    response: Response,
    next: CallHandler,
  ): Promise<void> {
    const key = this.keyOf(route, request);
    noteIdempotentRequest(request, { operation: route.operation, key });
    const scope = route.scope === 'operator' ? OPERATOR_SCOPE : this.options.resolveScope(request);
    // Undefined when the parser kept no bytes (no body).
    const requestDigest = request.rawBody && requestDigestOf(request.rawBody);
    const known = requestDigest && { operation: route, tenantId: scope.tenantId, key, requestDigest };
    // A retry of a finished key with the same bytes, answered before validation.
    const replay = known ? await this.executor.findReplay(known) : null;
    if (replay) {
      sendRecordedResponse(response, replay);
      return;
    }
    let body: object;
    try {
      body = await this.options.validateBody(request.body, route.body);
    } catch (error) {
      // Bytes that validated when the key finished answer as they did then.
      const stored = known ? await this.executor.findStoredReplay(known) : null;
      if (!stored) throw error;
      sendRecordedResponse(response, stored);
      return;
    }
    request[VALIDATED_BODY] = body;
    const call = {
      operation: route,
      tenantId: scope.tenantId,
      key,
      payload: isFingerprintSource(body) ? body.fingerprintPayload(scope.context) : body,
      requestDigest,
    };
    const answer =
      route.effect === 'external'
        ? // The handler only describes the operation; the protocol runs it, in its own transactions.
          await this.executor.executeExternal({
            ...call,
            effect: (await lastValueFrom(next.handle())) as ExternalEffect<unknown, unknown, unknown>,
          })
        : await this.executor.execute({ ...call, execute: () => lastValueFrom(next.handle()) });
    sendRecordedResponse(response, answer);
  }

  private keyOf(route: IdempotentRouteOptions, request: Request): string {
    try {
      return parseIdempotencyKey(request.headers['idempotency-key']);
    } catch (error) {
      if (error instanceof IdempotencyKeyMissingError) this.observer.observe(route.operation, 'missing_key');
      if (error instanceof IdempotencyKeyInvalidError) this.observer.observe(route.operation, 'invalid_key');
      throw error;
    }
  }
}

function isFingerprintSource(value: object): value is FingerprintSource {
  return typeof (value as Partial<FingerprintSource>).fingerprintPayload === 'function';
}
