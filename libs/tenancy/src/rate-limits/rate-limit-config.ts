import { type Env, EnvReader, type ParsedConfig } from '@ledgerkey/process';

/** Admission settings of the API, from the environment. */
export interface RateLimitConfig {
  /**
   * RATE_LIMIT_PER_SECOND: sustained requests per second per company (and per client address
   * for requests whose key this process has not verified), bursts up to twice that; shared out
   * among the API processes on the database.
   */
  perSecond: number;
}

export const RATE_LIMIT_CONFIG = Symbol('RATE_LIMIT_CONFIG');
export const DEFAULT_RATE_LIMIT_PER_SECOND = 100;

export function parseRateLimitConfig(env: Env): ParsedConfig<RateLimitConfig> {
  const reader = new EnvReader(env);
  return reader.parsed({
    perSecond: reader.integer('RATE_LIMIT_PER_SECOND', DEFAULT_RATE_LIMIT_PER_SECOND, 1, 1_000_000),
  });
}
