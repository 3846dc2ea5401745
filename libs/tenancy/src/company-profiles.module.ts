import { Module } from '@nestjs/common';
import { CompaniesRepository } from './companies.repository';
import { CompanyProfileQueries } from './company-profile/company-profile-queries';

/**
 * Company profiles for other libs (the seller snapshot of documents), without the request
 * admission that `TenancyModule` carries: importing `TenancyModule` itself from a lib would make
 * Nest build a second instance of it beside the API's `TenancyModule.forRoot(...)`, with its own
 * revocation listener, verified-key cache and rate limiter.
 */
@Module({
  providers: [CompaniesRepository, CompanyProfileQueries],
  exports: [CompanyProfileQueries],
})
export class CompanyProfilesModule {}
