import { Inject, Injectable, Optional } from '@nestjs/common';
import { RevocationListener } from '../revocations/revocation-listener';
import { DEFAULT_RATE_LIMIT_PER_SECOND, RATE_LIMIT_CONFIG, type RateLimitConfig } from './rate-limit-config';
import { type BucketDecision, TokenBuckets } from './token-buckets';

/**
 * Rate limits, in this process's memory (no I/O per request). The deployment's limit
 * (RATE_LIMIT_PER_SECOND, burst ×2) is shared out evenly among the API processes on the
 * database, which `RevocationListener` counts every second: with a load balancer that spreads a
 * company's requests evenly, the company gets about the configured rate across all processes.
 */
@Injectable()
export class RateLimiter {
  private readonly companies = new TokenBuckets();
  private readonly addresses = new TokenBuckets();
  private readonly perSecond: number;

  constructor(
    private readonly instances: RevocationListener,
    @Optional() @Inject(RATE_LIMIT_CONFIG) config?: RateLimitConfig,
  ) {
    this.perSecond = config?.perSecond ?? DEFAULT_RATE_LIMIT_PER_SECOND;
  }

  /** Takes a request from the company's bucket. */
  company(companyId: string): BucketDecision {
    return this.companies.take(companyId, ...this.share());
  }

  /** Takes a request from the client address's bucket (requests not yet authenticated). */
  address(address: string): BucketDecision {
    return this.addresses.take(address, ...this.share());
  }

  /** This process's rate and burst. */
  private share(): [ratePerSecond: number, capacity: number] {
    const rate = this.perSecond / this.instances.liveInstances;
    return [rate, Math.max(1, 2 * rate)];
  }
}
