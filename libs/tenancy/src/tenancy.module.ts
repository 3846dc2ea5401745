import { Module } from '@nestjs/common';
import { ApiKeyGuard } from './api-key.guard';
import { CompaniesRepository } from './companies.repository';
import { CompanyProfileQueries } from './company-profile/company-profile-queries';
import { CreateCompanyHandler } from './create-company/create-company.handler';
import { UpdateCompanyProfileHandler } from './update-company-profile/update-company-profile.handler';

@Module({
  providers: [
    CompaniesRepository,
    CreateCompanyHandler,
    ApiKeyGuard,
    CompanyProfileQueries,
    UpdateCompanyProfileHandler,
  ],
  exports: [
    CompaniesRepository,
    CreateCompanyHandler,
    ApiKeyGuard,
    CompanyProfileQueries,
    UpdateCompanyProfileHandler,
  ],
})
export class TenancyModule {}
