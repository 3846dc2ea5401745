import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import { apiKeyPrefix, generateApiKey, hashApiKey } from '../api-key';
import { CompaniesRepository } from '../companies.repository';
import type { Company } from '../company';

export interface CreatedCompany {
  companyId: string;
  /** The only time the plaintext key exists outside the caller. */
  apiKey: string;
}

@Injectable()
export class CreateCompanyHandler {
  constructor(private readonly companies: CompaniesRepository) {}

  /** Creates a company and its first API key in one transaction. */
  @Transactional()
  async execute(input: Omit<Company, 'id'>): Promise<CreatedCompany> {
    const company = await this.companies.insert(input);
    const apiKey = generateApiKey();
    await this.companies.insertApiKey(company.id, hashApiKey(apiKey), apiKeyPrefix(apiKey));
    return { companyId: company.id, apiKey };
  }
}
