import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One round trip instead of two for the start of every keyed request: take the per-key lock,
 * then read the key's record.
 */
export class IdempotencyClaim1764900000000 implements MigrationInterface {
  name = 'IdempotencyClaim1764900000000';

  async up(db: QueryRunner): Promise<void> {
    // VOLATILE on purpose: each statement of a volatile function takes a fresh snapshot, so the
    // read after the lock sees whatever the previous holder of the lock committed (a single
    // SELECT doing both would read with a snapshot taken before the lock was granted).
    await db.query(`
      CREATE FUNCTION claim_idempotency_key(p_company_id uuid, p_operation text, p_key text)
      RETURNS TABLE (locked boolean, fingerprint bytea, response_status smallint,
                     response_headers jsonb, response_body text, expires_at timestamptz,
                     expired boolean)
      LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        IF NOT pg_try_advisory_xact_lock(
                 hashtextextended(p_company_id::text || E'\\n' || p_operation || E'\\n' || p_key, 0)) THEN
          RETURN QUERY SELECT false, NULL::bytea, NULL::smallint, NULL::jsonb, NULL::text,
                              NULL::timestamptz, NULL::boolean;
          RETURN;
        END IF;
        RETURN QUERY
          SELECT true, r.fingerprint, r.response_status, r.response_headers, r.response_body,
                 r.expires_at, r.expires_at <= now()
            FROM idempotency_records r
           WHERE r.company_id = p_company_id AND r.operation = p_operation AND r.idempotency_key = p_key;
        IF NOT FOUND THEN
          RETURN QUERY SELECT true, NULL::bytea, NULL::smallint, NULL::jsonb, NULL::text,
                              NULL::timestamptz, NULL::boolean;
        END IF;
      END $$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP FUNCTION claim_idempotency_key(uuid, text, text)`);
  }
}
