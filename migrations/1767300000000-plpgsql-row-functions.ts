import type { MigrationInterface, QueryRunner } from 'typeorm';
import { METADATA_BOUNDS } from './1766200000000-metadata';
import { COMPANY_SELLER_QUERY } from './1767200000000-company-seller-function';

/**
 * `is_valid_metadata(jsonb)` and `company_seller(uuid)` run once for every document a create
 * stores (the metadata CHECK, the seller snapshot), and neither can be inlined (a subquery, a
 * FROM). As `LANGUAGE sql` functions PostgreSQL before 18 parses and plans their bodies again at
 * every call (about 30 and 40 µs on PostgreSQL 15 here); PL/pgSQL keeps the plan for the
 * session, which makes a call 6–7 µs. Same results, same volatility: only the language changes,
 * and `{}` (nearly every document's metadata) is answered before any query.
 */
export class PlpgsqlRowFunctions1767300000000 implements MigrationInterface {
  name = 'PlpgsqlRowFunctions1767300000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE OR REPLACE FUNCTION is_valid_metadata(m jsonb) RETURNS boolean
      LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
      BEGIN
        IF m = '{}'::jsonb THEN
          RETURN true;
        END IF;
        RETURN ${METADATA_BOUNDS};
      END $$`);
    await db.query(`
      CREATE OR REPLACE FUNCTION company_seller(p_company_id uuid) RETURNS jsonb
      LANGUAGE plpgsql STABLE AS $$
      BEGIN
        RETURN (${COMPANY_SELLER_QUERY});
      END $$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE OR REPLACE FUNCTION is_valid_metadata(m jsonb) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT ${METADATA_BOUNDS} $$`);
    await db.query(`
      CREATE OR REPLACE FUNCTION company_seller(p_company_id uuid) RETURNS jsonb
      LANGUAGE sql STABLE AS $$ ${COMPANY_SELLER_QUERY} $$`);
  }
}
