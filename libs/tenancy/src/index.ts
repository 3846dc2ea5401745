export { TenancyModule } from './tenancy.module';
export { CompanyProfilesModule } from './company-profiles.module';
export {
  ApiKeyGuard,
  CurrentCompany,
  admitUnauthenticated,
  authenticatedCompanyOf,
  bearerTokenOf,
  companyOf,
} from './api-key.guard';
export { API_KEY_SCOPES } from './api-key';
export type { ApiKeyScope } from './api-key';
export { CompaniesRepository } from './companies.repository';
export type { CompanyListItem } from './companies.repository';
export type { Company } from './company';
export { CreateCompanyHandler } from './create-company/create-company.handler';
export type { CreatedCompany, NewCompany } from './create-company/create-company.handler';
export { CreateCompanyDto, CreatedCompanyView } from './create-company/create-company.dto';
export { companyProfileOf, sellerSnapshotSql, storedProfileOf } from './company-profile/company-profile';
export type { CompanyAddress, CompanyProfile, CompanyProfileInput } from './company-profile/company-profile';
export { CompanyAddressDto, CompanyProfileDto } from './company-profile/company-profile.dto';
export { CompanyAddressView, CompanyProfileView, SellerView } from './company-profile/company-profile.view';
export { CompanyProfileQueries } from './company-profile/company-profile-queries';
export { UpdateCompanyProfileDto } from './update-company-profile/update-company-profile.dto';
export { UpdateCompanyProfileHandler } from './update-company-profile/update-company-profile.handler';
export { ApiKeyListView, ApiKeyView, CreatedApiKeyView } from './api-keys/api-key.view';
export { ApiKeyQueries } from './api-keys/api-key-queries';
export { CreateApiKeyDto } from './create-api-key/create-api-key.dto';
export { CreateApiKeyHandler } from './create-api-key/create-api-key.handler';
export { RevokeApiKeyHandler } from './revoke-api-key/revoke-api-key.handler';
export { RotateApiKeyHandler } from './rotate-api-key/rotate-api-key.handler';
export type { RotatedApiKey } from './rotate-api-key/rotate-api-key.handler';
export {
  API_KEY_REVOKED_CHANNEL,
  REVOCATION_LISTENER_APPLICATION_NAME,
  RevocationListener,
} from './revocations/revocation-listener';
export { RateLimiter } from './rate-limits/rate-limiter';
export { DEFAULT_RATE_LIMIT_PER_SECOND, parseRateLimitConfig } from './rate-limits/rate-limit-config';
export type { RateLimitConfig } from './rate-limits/rate-limit-config';
export {
  ApiKeyNotFoundError,
  ForbiddenError,
  LastReadWriteKeyError,
  RateLimitedError,
  UnauthorizedError,
} from './tenancy.errors';
