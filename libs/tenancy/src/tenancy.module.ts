import { Module } from '@nestjs/common';
import { ApiKeyGuard } from './api-key.guard';
import { CompaniesRepository } from './companies.repository';
import { CreateCompanyHandler } from './create-company/create-company.handler';

@Module({
  providers: [CompaniesRepository, CreateCompanyHandler, ApiKeyGuard],
  exports: [CompaniesRepository, CreateCompanyHandler, ApiKeyGuard],
})
export class TenancyModule {}
