import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import { CompaniesRepository } from '../companies.repository';
import type { Company } from '../company';
import { companyProfileView } from '../company-profile/company-profile-queries';
import type { CompanyProfileView } from '../company-profile/company-profile.view';
import type { UpdateCompanyProfileDto } from './update-company-profile.dto';

@Injectable()
export class UpdateCompanyProfileHandler {
  constructor(private readonly companies: CompaniesRepository) {}

  /**
   * Replaces the company's profile (omitted optional members are cleared). Documents issued
   * from the commit on name the new profile as their seller; issued ones keep their snapshot.
   * Setting the same profile twice changes nothing the second time.
   * @returns the whole profile, as `GET /v1/company/profile` answers it
   */
  @Transactional()
  async execute(
    company: Pick<Company, 'id' | 'countryCode'>,
    dto: UpdateCompanyProfileDto,
  ): Promise<CompanyProfileView> {
    const profile = dto.fingerprintPayload(company);
    await this.companies.replaceProfile(company.id, profile);
    return companyProfileView(profile);
  }
}
