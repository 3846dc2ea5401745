import { Inject, Injectable, Optional } from '@nestjs/common';
import { RevocationListener } from '../revocations/revocation-listener';
import {
  DEFAULT_RATE_LIMIT_PER_SECOND,
  DEFAULT_RATE_LIMIT_UNVERIFIED_PER_SECOND,
  RATE_LIMIT_CONFIG,
  type RateLimitConfig,
} from './rate-limit-config';
import { type BucketDecision, TokenBuckets } from './token-buckets';

/**
 * Rate limits, in this process's memory (no I/O per request). The deployment's limits
 * (RATE_LIMIT_PER_SECOND per company, RATE_LIMIT_UNVERIFIED_PER_SECOND per client address for
 * requests not authenticated; bursts ×2) are shared out evenly among the API processes on the
 * database, which `RevocationListener` counts every second: with a load balancer that spreads a
 * company's requests evenly, the company gets about the configured rate across all processes.
 */
@Injectable()
export class RateLimiter {
  private readonly companies = new TokenBuckets();
  private readonly addresses = new TokenBuckets();
  private readonly perSecond: number;
  private readonly unverifiedPerSecond: number;

  constructor(
    private readonly instances: RevocationListener,
    @Optional() @Inject(RATE_LIMIT_CONFIG) config?: RateLimitConfig,
  ) {
    this.perSecond = config?.perSecond ?? DEFAULT_RATE_LIMIT_PER_SECOND;
    this.unverifiedPerSecond = config?.unverifiedPerSecond ?? DEFAULT_RATE_LIMIT_UNVERIFIED_PER_SECOND;
  }

  /** Takes a request from the company's bucket. */
  company(companyId: string): BucketDecision {
    return this.companies.take(companyId, ...this.share(this.perSecond));
  }

  /** Takes a request from the client address's bucket (requests not yet authenticated). */
  address(address: string): BucketDecision {
    return this.addresses.take(address, ...this.share(this.unverifiedPerSecond));
  }

  /** This process's share of a deployment's rate, and its burst. */
  private share(perSecond: number): [ratePerSecond: number, capacity: number] {
    const rate = perSecond / this.instances.liveInstances;
    return [rate, Math.max(1, 2 * rate)];
  }
}
