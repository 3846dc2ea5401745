import { randomUUID } from 'node:crypto';
import type { CreateCompanyDto } from '@ledgerkey/tenancy';

/**
 * Test data for `POST /admin/companies` and `company:create`, typed by the route's DTO (an operator
 * route: not in the customer document, so not in the SDK).
 */
type CreateCompanyRequest = Pick<CreateCompanyDto, 'name' | 'countryCode' | 'currency'>;

export class CompanyBuilder {
  constructor(
    private readonly request: CreateCompanyRequest = {
      name: `Company ${randomUUID()}`,
      countryCode: 'LT',
      currency: 'EUR',
    },
  ) {}

  named(name: string): CompanyBuilder {
    return new CompanyBuilder({ ...this.request, name });
  }

  in(countryCode: string, currency: string): CompanyBuilder {
    return new CompanyBuilder({ ...this.request, countryCode, currency });
  }

  build(): CreateCompanyRequest {
    return { ...this.request };
  }
}

export function aCompany(): CompanyBuilder {
  return new CompanyBuilder();
}
