import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Request } from 'express';
import { admitUnauthenticated, bearerTokenOf, RateLimiter, UnauthorizedError } from '@ledgerkey/tenancy';
import { API_CONFIG, type ApiConfig } from '../config';
import { ResourceNotFoundError } from '../resource-id.pipe';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * `/admin` exists only when ADMIN_API_TOKEN is set (404 otherwise) and needs that token, sent as
 * `/v1`'s keys are (`Authorization: Bearer …`, the scheme's case ignored). A request without it
 * is admitted as `/v1`'s unauthenticated ones are: it takes from its address's rate limit, so
 * guessing the token meets `429` before long.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(
    @Inject(API_CONFIG) config: ApiConfig,
    private readonly limiter: RateLimiter,
  ) {
    this.expected = config.adminApiToken === undefined ? undefined : digest(config.adminApiToken);
  }

  /**
   * @throws ResourceNotFoundError when the admin API is off
   * @throws RateLimitedError when a request without the token comes from an address over its limit
   * @throws UnauthorizedError without the token
   */
  canActivate(context: ExecutionContext): boolean {
    if (this.expected === undefined) throw new ResourceNotFoundError();
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    // Compare digests in constant time: equal length, and no early exit on the first difference.
    if (timingSafeEqual(digest(bearerTokenOf(request) ?? ''), this.expected)) return true;
    admitUnauthenticated(this.limiter, request, http.getResponse<ServerResponse>());
    throw new UnauthorizedError(
      'A valid admin token is required: send "Authorization: Bearer <ADMIN_API_TOKEN>".',
    );
  }
}
