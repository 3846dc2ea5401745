import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `claim_new_idempotency_key`: the claim of a key expected to be new (nearly every create), sent
 * in front of the operation's first statement in one round trip (`PipeliningClient.lead`). It
 * answers nothing: it takes the per-key lock and returns when the key is new, and raises
 * SQLSTATE LK409 (a code of ours: class LK is no standard class) otherwise (a finished or unfinished record, or another transaction holding the lock). The
 * raise skips the operation's statement and aborts the transaction; the protocol then rolls back
 * and claims the usual way (`claim_idempotency_key`), which decides replay, 422 or 409.
 *
 * Same lock and the same reading as `claim_idempotency_key`'s second step: VOLATILE, so the read
 * after the lock has a fresh snapshot; an expired finished record is deleted under the lock (the
 * key is new). Without the lock-free read first: a key with a record is not the case it is for.
 */
export class ClaimNewIdempotencyKey1767400000000 implements MigrationInterface {
  name = 'ClaimNewIdempotencyKey1767400000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION claim_new_idempotency_key(p_company_id uuid, p_operation text, p_key text,
                                                p_now timestamptz)
      RETURNS void
      LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        r record;
      BEGIN
        IF pg_try_advisory_xact_lock(
             hashtextextended(p_company_id::text || E'\\n' || p_operation || E'\\n' || p_key, 0)) THEN
          SELECT i.state, i.expires_at INTO r FROM idempotency_records i
           WHERE i.company_id = p_company_id AND i.operation = p_operation AND i.idempotency_key = p_key;
          IF NOT FOUND THEN
            RETURN;
          END IF;
          IF r.state IN ('completed', 'failed_final') AND r.expires_at <= p_now THEN
            DELETE FROM idempotency_records i
             WHERE i.company_id = p_company_id AND i.operation = p_operation AND i.idempotency_key = p_key;
            RETURN;
          END IF;
        END IF;
        RAISE EXCEPTION 'idempotency key is not new' USING ERRCODE = 'LK409';
      END $$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP FUNCTION claim_new_idempotency_key(uuid, text, text, timestamptz)`);
  }
}
