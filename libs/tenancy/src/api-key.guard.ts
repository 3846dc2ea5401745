import { type CanActivate, type ExecutionContext, Injectable, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import { hashApiKey } from './api-key';
import { CompaniesRepository } from './companies.repository';
import type { Company } from './company';
import { UnauthorizedError } from './tenancy.errors';

const COMPANY = Symbol('COMPANY');

type AuthenticatedRequest = Request & { [COMPANY]?: Company };

/** The auth scheme name is case-insensitive (RFC 9110 §11.1). */
const BEARER = /^Bearer ([A-Za-z0-9_-]{1,200})$/i;

/**
 * How long a process trusts a key it has verified: one database round trip saved on nearly
 * every request. Companies and keys are immutable today; when key revocation arrives, a
 * revoked key keeps working for at most this long in processes that saw it.
 */
const VERIFIED_KEY_TTL_MS = 30_000;
const VERIFIED_KEYS_MAX = 10_000;

/** Authenticates `Authorization: Bearer <api key>` and attaches the key's company. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** Key hash (hex) → company, for keys verified within VERIFIED_KEY_TTL_MS; unknown keys are never cached. */
  private readonly verified = new Map<string, { company: Company; until: number }>();

  constructor(private readonly companies: CompaniesRepository) {}

  /** @throws UnauthorizedError for a missing, malformed, unknown or revoked key */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const match = BEARER.exec(request.headers.authorization ?? '');
    if (!match) throw new UnauthorizedError();
    request[COMPANY] = await this.companyOfKey(match[1]);
    return true;
  }

  private async companyOfKey(apiKey: string): Promise<Company> {
    const hash = hashApiKey(apiKey);
    const cacheKey = hash.toString('hex');
    const cached = this.verified.get(cacheKey);
    if (cached && cached.until > Date.now()) return cached.company;
    const company = await this.companies.findByApiKeyHash(hash);
    if (!company) throw new UnauthorizedError();
    this.verified.delete(cacheKey);
    // Map iteration order is insertion order: the first entry is the oldest.
    if (this.verified.size >= VERIFIED_KEYS_MAX)
      this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(cacheKey, { company, until: Date.now() + VERIFIED_KEY_TTL_MS });
    return company;
  }
}

/** The company authenticated by `ApiKeyGuard`. */
export function companyOf(request: Request): Company {
  const company = authenticatedCompanyOf(request);
  if (!company) throw new Error('companyOf() called on a route without ApiKeyGuard');
  return company;
}

/** The company `ApiKeyGuard` authenticated, or undefined if it did not (yet), e.g. for request logs. */
export function authenticatedCompanyOf(request: Request): Company | undefined {
  return (request as AuthenticatedRequest)[COMPANY];
}

export const CurrentCompany = createParamDecorator((_: unknown, context: ExecutionContext) =>
  companyOf(context.switchToHttp().getRequest<Request>()),
);
