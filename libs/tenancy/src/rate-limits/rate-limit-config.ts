import { type Env, EnvReader, type ParsedConfig } from '@ledgerkey/process';

/** Admission settings of the API, from the environment. */
export interface RateLimitConfig {
  /**
   * RATE_LIMIT_PER_SECOND: sustained requests per second per company, bursts up to twice that;
   * shared out among the API processes on the database.
   */
  perSecond: number;
  /**
   * RATE_LIMIT_UNVERIFIED_PER_SECOND: the same per client address, for requests that have not
   * authenticated — no credential, a wrong one, or an API key this process has not verified yet:
   * tighter than a company's, so a scanner of random keys costs the database little.
   */
  unverifiedPerSecond: number;
}

export const RATE_LIMIT_CONFIG = Symbol('RATE_LIMIT_CONFIG');
export const DEFAULT_RATE_LIMIT_PER_SECOND = 100;
export const DEFAULT_RATE_LIMIT_UNVERIFIED_PER_SECOND = 10;

export function parseRateLimitConfig(env: Env): ParsedConfig<RateLimitConfig> {
  const reader = new EnvReader(env);
  return reader.parsed({
    perSecond: reader.integer('RATE_LIMIT_PER_SECOND', DEFAULT_RATE_LIMIT_PER_SECOND, 1, 1_000_000),
    unverifiedPerSecond: reader.integer(
      'RATE_LIMIT_UNVERIFIED_PER_SECOND',
      DEFAULT_RATE_LIMIT_UNVERIFIED_PER_SECOND,
      1,
      1_000_000,
    ),
  });
}
