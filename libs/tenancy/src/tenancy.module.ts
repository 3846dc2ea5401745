import { type DynamicModule, Module } from '@nestjs/common';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyQueries } from './api-keys/api-key-queries';
import { ApiKeysRepository } from './api-keys/api-keys.repository';
import { CompaniesRepository } from './companies.repository';
import { CompanyProfileQueries } from './company-profile/company-profile-queries';
import { CreateApiKeyHandler } from './create-api-key/create-api-key.handler';
import { CreateCompanyHandler } from './create-company/create-company.handler';
import { RATE_LIMIT_CONFIG, type RateLimitConfig } from './rate-limits/rate-limit-config';
import { RateLimiter } from './rate-limits/rate-limiter';
import { RevocationListener } from './revocations/revocation-listener';
import { VerifiedApiKeys } from './revocations/verified-api-keys';
import { RevokeApiKeyHandler } from './revoke-api-key/revoke-api-key.handler';
import { RotateApiKeyHandler } from './rotate-api-key/rotate-api-key.handler';
import { UpdateCompanyProfileHandler } from './update-company-profile/update-company-profile.handler';

const EXPORTED = [
  CompaniesRepository,
  CreateCompanyHandler,
  CompanyProfileQueries,
  UpdateCompanyProfileHandler,
  CreateApiKeyHandler,
  RevokeApiKeyHandler,
  RotateApiKeyHandler,
  ApiKeyQueries,
  RevocationListener,
  ApiKeyGuard,
  // What the guard needs where a controller uses it (Nest builds guards in the controller's module).
  ApiKeysRepository,
  RateLimiter,
  VerifiedApiKeys,
];

/**
 * Companies, API keys and the admission of `/v1` requests. Import `forRoot` in an API (its rate
 * limits); the plain module (default limits) serves tests and tools that never take requests.
 */
@Module({
  providers: [
    ...EXPORTED.filter((provider) => provider !== VerifiedApiKeys),
    { provide: VerifiedApiKeys, useFactory: () => new VerifiedApiKeys() },
  ],
  exports: EXPORTED,
})
export class TenancyModule {
  static forRoot(rateLimits: RateLimitConfig): DynamicModule {
    return { module: TenancyModule, providers: [{ provide: RATE_LIMIT_CONFIG, useValue: rateLimits }] };
  }
}
