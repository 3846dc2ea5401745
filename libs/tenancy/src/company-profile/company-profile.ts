/** Where the company is established. `countryCode` defaults to the company's country. */
export interface CompanyAddress {
  street: string | null;
  city: string | null;
  postalCode: string | null;
  countryCode: string;
}

/**
 * The company as its documents name it (the seller of its invoices): every member present,
 * absent ones null. `legalName` defaults to the company's name.
 */
export interface CompanyProfile {
  legalName: string;
  vatId: string | null;
  registrationNumber: string | null;
  address: CompanyAddress;
  iban: string | null;
  email: string | null;
  peppolId: string | null;
}

/** A profile as a request gives it: only `legalName` is required. */
export interface CompanyProfileInput {
  legalName: string;
  vatId?: string | null;
  registrationNumber?: string | null;
  address?: Partial<CompanyAddress> | null;
  iban?: string | null;
  email?: string | null;
  peppolId?: string | null;
}

/**
 * The profile with defaults applied and absent members null, in the order the API shows them.
 * Also rebuilds a profile read from jsonb (a seller snapshot), which does not keep key order.
 */
export function companyProfileOf(input: CompanyProfileInput, companyCountryCode: string): CompanyProfile {
  return {
    legalName: input.legalName,
    vatId: input.vatId ?? null,
    registrationNumber: input.registrationNumber ?? null,
    address: {
      street: input.address?.street ?? null,
      city: input.address?.city ?? null,
      postalCode: input.address?.postalCode ?? null,
      countryCode: input.address?.countryCode ?? companyCountryCode,
    },
    iban: input.iban ?? null,
    email: input.email ?? null,
    peppolId: input.peppolId ?? null,
  };
}

/**
 * A seller snapshot as PostgreSQL gives it (`company_seller()`, or a document's `seller` column),
 * in the API's member order: jsonb does not keep key order.
 */
export function storedProfileOf(stored: CompanyProfile): CompanyProfile {
  return companyProfileOf(stored, stored.address.countryCode);
}

/** The SQL expression of a company's seller snapshot, for a document's INSERT (`company_seller`). */
export function sellerSnapshotSql(companyPlaceholder: string): string {
  return `company_seller(${companyPlaceholder})`;
}
