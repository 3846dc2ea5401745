import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { UnauthorizedError } from '@ledgerkey/tenancy';
import { API_CONFIG, type ApiConfig } from '../config';
import { ResourceNotFoundError } from '../resource-id.pipe';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** `/admin` exists only when ADMIN_API_TOKEN is set (404 otherwise) and needs that token. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor(@Inject(API_CONFIG) config: ApiConfig) {
    this.expected = config.adminApiToken === undefined ? undefined : digest(config.adminApiToken);
  }

  canActivate(context: ExecutionContext): boolean {
    if (this.expected === undefined) throw new ResourceNotFoundError();
    const header = context.switchToHttp().getRequest<Request>().headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    // Compare digests in constant time: equal length, and no early exit on the first difference.
    if (!timingSafeEqual(digest(token), this.expected)) throw new UnauthorizedError();
    return true;
  }
}
