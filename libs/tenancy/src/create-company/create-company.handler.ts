import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import { CompaniesRepository } from '../companies.repository';
import type { Company } from '../company';
import { type CompanyProfileInput, companyProfileOf } from '../company-profile/company-profile';
import { CreateApiKeyHandler } from '../create-api-key/create-api-key.handler';

export interface CreatedCompany {
  companyId: string;
  /** The only time the plaintext key exists outside the caller. */
  apiKey: string;
}

export interface NewCompany extends Omit<Company, 'id'> {
  profile?: CompanyProfileInput;
}

@Injectable()
export class CreateCompanyHandler {
  constructor(
    private readonly companies: CompaniesRepository,
    private readonly createApiKey: CreateApiKeyHandler,
  ) {}

  /**
   * Creates a company, its profile and its first API key (`read_write`, unnamed) in one transaction. Without a profile
   * the company's legal name is its name.
   */
  @Transactional()
  async execute(input: NewCompany): Promise<CreatedCompany> {
    const { profile, ...fields } = input;
    const company = await this.companies.insert(
      { name: fields.name, countryCode: fields.countryCode, currency: fields.currency },
      companyProfileOf(profile ?? { legalName: fields.name }, fields.countryCode),
    );
    const { secret } = await this.createApiKey.execute(company.id, { scope: 'read_write' });
    return { companyId: company.id, apiKey: secret };
  }
}
