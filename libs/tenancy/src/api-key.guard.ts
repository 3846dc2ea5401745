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

/** Authenticates `Authorization: Bearer <api key>` and attaches the key's company. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly companies: CompaniesRepository) {}

  /** @throws UnauthorizedError for a missing, malformed, unknown or revoked key */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const match = BEARER.exec(request.headers.authorization ?? '');
    if (!match) throw new UnauthorizedError();
    const company = await this.companies.findByApiKeyHash(hashApiKey(match[1]));
    if (!company) throw new UnauthorizedError();
    request[COMPANY] = company;
    return true;
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
