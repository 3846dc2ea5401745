import {
  applyDecorators,
  createParamDecorator,
  type ExecutionContext,
  Res,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { ApiBody, ApiHeader, ApiResponse, type ApiResponseCommonMetadata } from '@nestjs/swagger';
import type { Request } from 'express';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency-key';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import {
  IDEMPOTENCY_KEY_EXAMPLE,
  IDEMPOTENT_ROUTE,
  VALIDATED_BODY,
  type IdempotentRouteOptions,
} from './idempotent-route';

/**
 * Makes a route idempotent: `Idempotency-Key` header required, body validated first, then
 * one transaction holding the key lock, the operation's effects and the stored response.
 * The idempotency layer writes the route's response itself (status, headers, body as
 * recorded), so a replayed answer may have another status than `@HttpCode`.
 * Also documents the header and the idempotency answers in the OpenAPI document (the
 * application renders their problem examples).
 */
export function Idempotent<TResult>(options: IdempotentRouteOptions<TResult>): MethodDecorator {
  return applyDecorators(
    SetMetadata(IDEMPOTENT_ROUTE, options),
    UseInterceptors(IdempotencyInterceptor),
    ResponseWrittenByInterceptor(),
    ApiBody({ type: options.body }),
    ApiHeader({
      name: 'Idempotency-Key',
      required: true,
      description:
        `One key per logical operation, reused on every retry (1–${IDEMPOTENCY_KEY_MAX_LENGTH} ` +
        'visible ASCII characters; bare or as a quoted Structured Field string). Scoped to ' +
        (options.scope === 'operator' ? 'operators' : 'your company') +
        ' and this operation.',
      schema: {
        type: 'string',
        maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
        example: options.keyExample ?? IDEMPOTENCY_KEY_EXAMPLE,
      },
    }),
    ApiResponse({
      status: 400,
      description:
        'Missing or invalid Idempotency-Key (`idempotency_key_missing`, ' +
        '`idempotency_key_invalid`) or invalid body (`validation_failed`, `malformed_json`). Nothing is stored.',
      content: mainProblemCode('idempotency_key_missing'),
    }),
    ApiResponse({
      status: 409,
      description:
        'A request with this key is still running (`idempotency_key_in_use`, with `Retry-After`), ' +
        'or a business-key conflict documented for this route.',
      headers: {
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
      },
      content: mainProblemCode('idempotency_key_in_use'),
    }),
    ApiResponse({
      status: 422,
      description:
        'The key was already used with a different payload (`idempotency_key_reused`; do not ' +
        'retry), or a business rule rejected the request (stored and replayed under the key).',
      content: mainProblemCode('idempotency_key_reused'),
    }),
  );
}

/**
 * Names the problem code a response documents first; the application renders the examples (its
 * problem type URLs are not the library's business).
 */
function mainProblemCode(code: string): ApiResponseCommonMetadata['content'] {
  return { 'application/problem+json': { example: { code } } };
}

/**
 * Tells Nest that the route's response is written by someone else, exactly as `@Res()` does:
 * the platform's response object is bound to one parameter past the handler's own (the handler
 * never reads it), so Nest neither sends the handler's result nor applies `@HttpCode` to it.
 */
function ResponseWrittenByInterceptor(): MethodDecorator {
  return (target, propertyKey, descriptor) => {
    const handler = descriptor.value as unknown as (...args: unknown[]) => unknown;
    Res()(target, propertyKey, handler.length);
  };
}

/** The body of an `@Idempotent` route, validated once by the idempotency interceptor. */
export const IdempotentBody = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<Request & { [VALIDATED_BODY]?: object }>();
  const body = request[VALIDATED_BODY];
  if (body === undefined) throw new Error('@IdempotentBody() used on a route without @Idempotent()');
  return body;
});
