export { TenancyModule } from './tenancy.module';
export { ApiKeyGuard, CurrentCompany, authenticatedCompanyOf, companyOf } from './api-key.guard';
export { CompaniesRepository } from './companies.repository';
export type { Company } from './company';
export { CreateCompanyHandler } from './create-company/create-company.handler';
export type { CreatedCompany } from './create-company/create-company.handler';
export { CreateCompanyDto, CreatedCompanyView } from './create-company/create-company.dto';
export { UnauthorizedError } from './tenancy.errors';
