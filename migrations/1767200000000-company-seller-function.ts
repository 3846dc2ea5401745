import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `company_seller(company)`: the company's profile as documents snapshot it (`seller`), as jsonb
 * — the same members and defaults as `CompanyProfileQueries.sellerOf` (legal name defaults to
 * the company's name, the address's country to the company's country). A document's INSERT
 * takes its seller with it, in the statement that stores the document: the snapshot is the
 * profile as that statement sees it, and a create saves the round trip of reading it first.
 * STABLE: it only reads.
 */
export class CompanySellerFunction1767200000000 implements MigrationInterface {
  name = 'CompanySellerFunction1767200000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION company_seller(p_company_id uuid) RETURNS jsonb
      LANGUAGE sql STABLE AS $$
        ${COMPANY_SELLER_QUERY}
      $$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP FUNCTION company_seller(uuid)`);
  }
}

/** The seller snapshot of company `p_company_id`; no row (an unknown company) gives NULL. */
export const COMPANY_SELLER_QUERY = `
        SELECT jsonb_build_object(
                 'legalName', coalesce(legal_name, name),
                 'vatId', vat_id,
                 'registrationNumber', registration_number,
                 'address', jsonb_build_object(
                   'street', street,
                   'city', city,
                   'postalCode', postal_code,
                   'countryCode', coalesce(address_country_code, country_code)),
                 'iban', iban,
                 'email', email,
                 'peppolId', peppol_id)
          FROM companies WHERE id = p_company_id`;
