import type { IncomingMessage, ServerResponse } from 'node:http';
import { type CanActivate, type ExecutionContext, Injectable, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import { hashApiKey } from './api-key';
import { ApiKeysRepository, type VerifiedApiKey } from './api-keys/api-keys.repository';
import type { Company } from './company';
import { RateLimiter } from './rate-limits/rate-limiter';
import type { BucketDecision } from './rate-limits/token-buckets';
import { VerifiedApiKeys } from './revocations/verified-api-keys';
import { ForbiddenError, RateLimitedError, UnauthorizedError } from './tenancy.errors';

const COMPANY = Symbol('COMPANY');

type AuthenticatedRequest = IncomingMessage & { [COMPANY]?: Company };

/** What an API key can be; anything else is not looked up. */
const API_KEY_FORM = /^[A-Za-z0-9_-]{1,200}$/;

/** What a `read_only` key may call. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Admits a request to a `/v1` route, before anything of the route runs (so a refusal stores
 * nothing under an Idempotency-Key):
 * 1. a key this process has verified recently (`VerifiedApiKeys`) is taken from memory;
 * 2. any other request — missing, malformed, unknown or not yet verified key — first takes from
 *    its client address's rate limit, so a flood of random keys is refused (`429`) before it
 *    reaches the database, then the key is looked up (once: concurrent requests with the same
 *    key wait for that lookup and take nothing from the address);
 * 3. the request takes from its company's rate limit (`429 rate_limited`, `Retry-After`);
 * 4. a `read_only` key may only read (`403 forbidden`).
 * Every answer carries the `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` of the
 * last limit it was counted against.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  /** Lookups in flight by key hash (hex): concurrent requests with one unverified key share one. */
  private readonly lookups = new Map<string, Promise<VerifiedApiKey>>();

  constructor(
    private readonly apiKeys: ApiKeysRepository,
    private readonly verified: VerifiedApiKeys,
    private readonly limiter: RateLimiter,
  ) {}

  /**
   * @throws UnauthorizedError for a missing, malformed, unknown or revoked key
   * @throws RateLimitedError when the client address or the company is over its limit
   * @throws ForbiddenError for a read_only key on anything but a read
   */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<Request & AuthenticatedRequest>();
    const response = http.getResponse<ServerResponse>();
    const hash = bearerHashOf(request);
    const hashHex = hash?.toString('hex');
    let key = hashHex === undefined ? undefined : this.verified.get(hashHex);
    if (!key) {
      const inFlight = hashHex === undefined ? undefined : this.lookups.get(hashHex);
      if (inFlight) {
        // The burst of a client whose key is being verified right now waits for that one lookup.
        key = await inFlight;
      } else {
        admitUnauthenticated(this.limiter, request, response);
        if (!hash || !hashHex) throw new UnauthorizedError();
        key = await this.lookUp(hash, hashHex);
      }
    }
    admit(response, this.limiter.company(key.company.id));
    if (!mayCall(key, request.method)) throw new ForbiddenError();
    request[COMPANY] = key.company;
    return true;
  }

  /**
   * The key of a request that this process verified recently and that may make this call: from
   * memory, nothing looked up or taken from a rate limit. Undefined when `canActivate` must
   * decide (no key, one not verified recently, a read_only key on a write).
   */
  recentlyVerifiedKeyOf(request: IncomingMessage): VerifiedApiKey | undefined {
    const hash = bearerHashOf(request);
    const key = hash && this.verified.get(hash.toString('hex'));
    return key && mayCall(key, request.method) ? key : undefined;
  }

  /**
   * Admits a request of a `recentlyVerifiedKeyOf` key as `canActivate` would: takes from its
   * company's rate limit (setting the RateLimit headers) and marks the request authenticated.
   * False, with nothing taken or set, when the limit refuses: `canActivate` then answers `429`.
   */
  admitRecentlyVerified(request: IncomingMessage, response: ServerResponse, key: VerifiedApiKey): boolean {
    const decision = this.limiter.company(key.company.id);
    if (!decision.allowed) return false;
    setRateLimitHeaders(response, decision);
    (request as AuthenticatedRequest)[COMPANY] = key.company;
    return true;
  }

  private lookUp(hash: Buffer, hashHex: string): Promise<VerifiedApiKey> {
    const ticket = this.verified.startLookup();
    const lookup = this.apiKeys
      .findActiveByHash(hash)
      .then((key) => {
        if (!key) throw new UnauthorizedError();
        this.verified.put(hashHex, key, ticket);
        return key;
      })
      .finally(() => this.lookups.delete(hashHex));
    this.lookups.set(hashHex, lookup);
    return lookup;
  }
}

/** The SHA-256 of the request's bearer key; undefined without a well-formed one. */
function bearerHashOf(request: IncomingMessage): Buffer | undefined {
  const token = bearerTokenOf(request);
  return token !== undefined && API_KEY_FORM.test(token) ? hashApiKey(token) : undefined;
}

/**
 * The credential of an `Authorization: Bearer …` header, the scheme's case ignored (RFC 9110
 * §11.1); undefined without one. Of any form: the admin guard compares it whole, `ApiKeyGuard`
 * looks up only what has an API key's form.
 */
export function bearerTokenOf(request: IncomingMessage): string | undefined {
  return /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
}

/**
 * The admission of a request that has not authenticated — no credential, a wrong one, or an API
 * key this process has not verified yet — on `/v1` and `/admin` alike: it takes from its client
 * address's rate limit (setting the RateLimit headers), so a flood of guesses is refused before
 * it costs a lookup.
 * @throws RateLimitedError when the address is over its limit
 */
export function admitUnauthenticated(
  limiter: RateLimiter,
  request: IncomingMessage & { ip?: string },
  response: ServerResponse,
): void {
  admit(response, limiter.address(request.ip ?? request.socket.remoteAddress ?? 'unknown'));
}

function mayCall(key: VerifiedApiKey, method: string | undefined): boolean {
  return key.scope !== 'read_only' || READ_METHODS.has(method ?? '');
}

/** Sets the RateLimit headers of a decision; @throws RateLimitedError when it refused. */
function admit(response: ServerResponse, decision: BucketDecision): void {
  setRateLimitHeaders(response, decision);
  if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
}

function setRateLimitHeaders(response: ServerResponse, decision: BucketDecision): void {
  response.setHeader('RateLimit-Limit', String(decision.limit));
  response.setHeader('RateLimit-Remaining', String(decision.remaining));
  response.setHeader('RateLimit-Reset', String(decision.resetSeconds));
}

/** The company authenticated by `ApiKeyGuard`. */
export function companyOf(request: Request): Company {
  const company = authenticatedCompanyOf(request);
  if (!company) throw new Error('companyOf() called on a route without ApiKeyGuard');
  return company;
}

/** The company `ApiKeyGuard` authenticated, or undefined if it did not (yet), e.g. for request logs. */
export function authenticatedCompanyOf(request: IncomingMessage): Company | undefined {
  return (request as AuthenticatedRequest)[COMPANY];
}

export const CurrentCompany = createParamDecorator((_: unknown, context: ExecutionContext) =>
  companyOf(context.switchToHttp().getRequest<Request>()),
);
