import { Injectable } from '@nestjs/common';
import { CompaniesRepository } from '../companies.repository';
import type { CompanyProfile } from './company-profile';
import type { CompanyProfileView } from './company-profile.view';

/** The read side of company profiles. */
@Injectable()
export class CompanyProfileQueries {
  constructor(private readonly companies: CompaniesRepository) {}

  /**
   * The profile documents issued now name as their seller. Read in the caller's transaction, so a
   * document snapshots the profile committed when it is issued.
   * @throws Error when the company does not exist (callers hold an authenticated company)
   */
  async sellerOf(companyId: string): Promise<CompanyProfile> {
    const profile = await this.companies.findProfile(companyId);
    if (!profile) throw new Error(`company ${companyId} does not exist`);
    return profile;
  }

  /** `GET /v1/company/profile`. */
  async get(companyId: string): Promise<CompanyProfileView> {
    return companyProfileView(await this.sellerOf(companyId));
  }
}

export function companyProfileView(profile: CompanyProfile): CompanyProfileView {
  return { object: 'company_profile', ...profile };
}
