import { type CompanyProfile, companyProfileOf } from '../company-profile/company-profile';
import { CompanyProfileDto } from '../company-profile/company-profile.dto';
import type { Company } from '../company';

/** `POST /v1/company/profile/update`: the whole profile, replacing the current one. */
export class UpdateCompanyProfileDto extends CompanyProfileDto {
  /** The profile as stored: the address country defaulted, absent members null. */
  fingerprintPayload(company: unknown): CompanyProfile {
    return companyProfileOf(this, (company as Pick<Company, 'countryCode'>).countryCode);
  }
}
