import {
  applyDecorators,
  createParamDecorator,
  type ExecutionContext,
  SetMetadata,
  UseInterceptors,
} from '@nestjs/common';
import { ApiBody, ApiHeader, ApiResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from './idempotency-key';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IDEMPOTENT_ROUTE, VALIDATED_BODY, type IdempotentRouteOptions } from './idempotent-route';

/**
 * Makes a route idempotent: `Idempotency-Key` header required, body validated first, then
 * one transaction holding the key lock, the operation's effects and the stored response.
 * Also documents the header and the idempotency answers in the OpenAPI document.
 */
export function Idempotent<TResult>(options: IdempotentRouteOptions<TResult>): MethodDecorator {
  return applyDecorators(
    SetMetadata(IDEMPOTENT_ROUTE, options),
    UseInterceptors(IdempotencyInterceptor),
    ApiBody({ type: options.body }),
    ApiHeader({
      name: 'Idempotency-Key',
      required: true,
      description:
        `One key per logical operation, reused on every retry (1–${IDEMPOTENCY_KEY_MAX_LENGTH} ` +
        'visible ASCII characters; bare or as a quoted Structured Field string). Scoped to your ' +
        'company and this operation.',
      schema: { type: 'string', maxLength: IDEMPOTENCY_KEY_MAX_LENGTH, example: 'order-1041-invoice' },
    }),
    ApiResponse({
      status: 400,
      description:
        'Missing or invalid Idempotency-Key (`idempotency_key_missing`, ' +
        '`idempotency_key_invalid`) or invalid body (`validation_failed`, `malformed_json`). Nothing is stored.',
      content: {
        'application/problem+json': {
          example: {
            type: 'https://docs.ledgerkey.dev/errors/idempotency_key_missing',
            title: 'Idempotency-Key missing',
            status: 400,
            detail: 'The Idempotency-Key header is required for this operation.',
            code: 'idempotency_key_missing',
            requestId: 'req_3f1c0a7e',
          },
        },
      },
    }),
    ApiResponse({
      status: 409,
      description:
        'A request with this key is still running (`idempotency_key_in_use`, with `Retry-After`), ' +
        'or a business-key conflict documented for this route.',
      headers: {
        'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
      },
      content: {
        'application/problem+json': {
          example: {
            type: 'https://docs.ledgerkey.dev/errors/idempotency_key_in_use',
            title: 'Idempotency-Key in use',
            status: 409,
            detail: 'A request with this Idempotency-Key is still being processed, retry shortly.',
            code: 'idempotency_key_in_use',
            requestId: 'req_3f1c0a7e',
          },
        },
      },
    }),
    ApiResponse({
      status: 422,
      description:
        'The key was already used with a different payload (`idempotency_key_reused`; do not ' +
        'retry), or a business rule rejected the request (stored and replayed under the key).',
      content: {
        'application/problem+json': {
          example: {
            type: 'https://docs.ledgerkey.dev/errors/idempotency_key_reused',
            title: 'Idempotency-Key reused',
            status: 422,
            detail: 'Idempotency-Key was already used with a different request payload.',
            code: 'idempotency_key_reused',
            requestId: 'req_3f1c0a7e',
          },
        },
      },
    }),
  );
}

/** The body of an `@Idempotent` route, validated once by the idempotency interceptor. */
export const IdempotentBody = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const request = context.switchToHttp().getRequest<Request & { [VALIDATED_BODY]?: object }>();
  const body = request[VALIDATED_BODY];
  if (body === undefined) throw new Error('@IdempotentBody() used on a route without @Idempotent()');
  return body;
});
