import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import { CompaniesRepository } from '../companies.repository';
import type { Company } from '../company';
import { CreateApiKeyHandler } from '../create-api-key/create-api-key.handler';

export interface CreatedCompany {
  companyId: string;
  /** The only time the plaintext key exists outside the caller. */
  apiKey: string;
}

@Injectable()
export class CreateCompanyHandler {
  constructor(
    private readonly companies: CompaniesRepository,
    private readonly createApiKey: CreateApiKeyHandler,
  ) {}

  /** Creates a company and its first API key (`read_write`, unnamed) in one transaction. */
  @Transactional()
  async execute(input: Omit<Company, 'id'>): Promise<CreatedCompany> {
    const company = await this.companies.insert(input);
    const { secret } = await this.createApiKey.execute(company.id, { scope: 'read_write' });
    return { companyId: company.id, apiKey: secret };
  }
}
