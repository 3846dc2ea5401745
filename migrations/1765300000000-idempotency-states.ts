import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotency records become an explicit state machine:
 *
 *   in_progress (lease, recovery point) ──▶ completed | failed_final   (answer stored)
 *         │  ▲                        └──▶ failed_retryable ──take over──┐
 *         └──┴── take over after the lease expired ◀─────────────────────┘
 *
 * Local operations go straight from "no record" to completed / failed_final in one transaction;
 * the other states are for operations whose effect leaves the database (payments).
 * Also: a finished record is read without the per-key lock (every retry of a finished key
 * replays), the stored body of a sensitive route may be sealed, and operator keys (admin
 * routes, the CLI) live under the nil UUID, which names no company.
 */
export class IdempotencyStates1765300000000 implements MigrationInterface {
  name = 'IdempotencyStates1765300000000';

  async up(db: QueryRunner): Promise<void> {
    // Operator keys are scoped to the nil UUID, which is no company: the key scope stays
    // (company_id, operation, key) and the primary key still starts with company_id.
    await db.query(`ALTER TABLE idempotency_records DROP CONSTRAINT idempotency_records_company_id_fkey`);
    await db.query(`
      ALTER TABLE idempotency_records
        ADD COLUMN state            text,
        ADD COLUMN lease_expires_at timestamptz,
        ADD COLUMN recovery_point   text,
        ADD COLUMN attempt          integer NOT NULL DEFAULT 1,
        ADD COLUMN response_sealed  boolean NOT NULL DEFAULT false,
        ADD COLUMN updated_at       timestamptz,
        ALTER COLUMN response_status DROP NOT NULL,
        ALTER COLUMN response_headers DROP NOT NULL,
        ALTER COLUMN response_body DROP NOT NULL`);
    // Every record so far is a finished local operation: a success, or a stored business
    // rejection. Replays now write the stored headers verbatim, Content-Type included.
    await db.query(`
      UPDATE idempotency_records
         SET state = CASE WHEN response_status < 300 THEN 'completed' ELSE 'failed_final' END,
             updated_at = created_at,
             response_headers = response_headers || jsonb_build_object('Content-Type',
               CASE WHEN response_status < 300 THEN 'application/json; charset=utf-8'
                    ELSE 'application/problem+json; charset=utf-8' END)`);
    await db.query(`
      ALTER TABLE idempotency_records
        ALTER COLUMN state SET NOT NULL,
        -- An INSERT that names no state stores a finished answer, as every writer before this
        -- migration did (processes of the previous version during an upgrade, maintenance SQL).
        -- Unfinished records name their state and NULL answer columns explicitly.
        ALTER COLUMN state SET DEFAULT 'completed',
        ALTER COLUMN updated_at SET NOT NULL,
        ALTER COLUMN updated_at SET DEFAULT now(),
        ADD CONSTRAINT ck_idempotency_records_state
          CHECK (state IN ('in_progress', 'completed', 'failed_retryable', 'failed_final')),
        -- A finished record has its answer; an unfinished one has none (not even a sealed one).
        ADD CONSTRAINT ck_idempotency_records_response CHECK (
          CASE WHEN state IN ('completed', 'failed_final')
               THEN response_status IS NOT NULL AND response_headers IS NOT NULL AND response_body IS NOT NULL
               ELSE response_status IS NULL AND response_headers IS NULL AND response_body IS NULL
                    AND NOT response_sealed
          END),
        -- Only a running operation holds a lease: a lease that outlives its state would wedge the key.
        ADD CONSTRAINT ck_idempotency_records_lease CHECK ((state = 'in_progress') = (lease_expires_at IS NOT NULL)),
        ADD CONSTRAINT ck_idempotency_records_recovery_point CHECK (length(recovery_point) BETWEEN 1 AND 100),
        -- The fencing token: every take-over increments it, and a transition names the attempt it
        -- belongs to, so a holder whose lease was taken over can no longer finish the key.
        ADD CONSTRAINT ck_idempotency_records_attempt CHECK (attempt >= 1)`);
    // Unfinished operations by age (recovery, "stuck" metrics); the index holds only those rows.
    await db.query(`
      CREATE INDEX ix_idempotency_records_unfinished ON idempotency_records (updated_at)
       WHERE state IN ('in_progress', 'failed_retryable')`);

    await db.query(`DROP FUNCTION claim_idempotency_key(uuid, text, text)`);
    // One round trip for the start of every keyed request.
    // 1. A lock-free read: a finished, unexpired record is the answer for every retry at once
    //    (no lock: twenty simultaneous retries of a finished key all replay), and an operation
    //    whose lease still runs is busy.
    // 2. Anything else (no record, expired, lease expired, failed_retryable) takes the per-key
    //    lock without waiting, then reads again. VOLATILE on purpose: each statement of a volatile
    //    function takes a fresh snapshot, so the read after the lock sees whatever the previous
    //    holder committed. An expired finished record is deleted under the lock: the key is new.
    // `p_now` is the caller's clock, the same one that wrote expires_at and lease_expires_at.
    await db.query(`
      CREATE FUNCTION claim_idempotency_key(p_company_id uuid, p_operation text, p_key text,
                                            p_now timestamptz)
      RETURNS TABLE (claimed boolean, state text, fingerprint bytea, response_status smallint,
                     response_headers jsonb, response_body text, response_sealed boolean,
                     expires_at timestamptz, lease_expires_at timestamptz, recovery_point text,
                     attempt integer)
      LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        r idempotency_records%ROWTYPE;
      BEGIN
        SELECT * INTO r FROM idempotency_records i
         WHERE i.company_id = p_company_id AND i.operation = p_operation AND i.idempotency_key = p_key;
        IF FOUND AND ((r.state IN ('completed', 'failed_final') AND r.expires_at > p_now)
                      OR (r.state = 'in_progress' AND r.lease_expires_at > p_now)) THEN
          RETURN QUERY SELECT false, r.state, r.fingerprint, r.response_status, r.response_headers,
                              r.response_body, r.response_sealed, r.expires_at, r.lease_expires_at,
                              r.recovery_point, r.attempt;
          RETURN;
        END IF;
        IF NOT pg_try_advisory_xact_lock(
                 hashtextextended(p_company_id::text || E'\\n' || p_operation || E'\\n' || p_key, 0)) THEN
          RETURN QUERY SELECT false, NULL::text, NULL::bytea, NULL::smallint, NULL::jsonb, NULL::text,
                              NULL::boolean, NULL::timestamptz, NULL::timestamptz, NULL::text, NULL::integer;
          RETURN;
        END IF;
        SELECT * INTO r FROM idempotency_records i
         WHERE i.company_id = p_company_id AND i.operation = p_operation AND i.idempotency_key = p_key;
        IF FOUND AND r.state IN ('completed', 'failed_final') AND r.expires_at <= p_now THEN
          DELETE FROM idempotency_records i
           WHERE i.company_id = p_company_id AND i.operation = p_operation AND i.idempotency_key = p_key;
          r := NULL;
        END IF;
        RETURN QUERY SELECT true, r.state, r.fingerprint, r.response_status, r.response_headers,
                            r.response_body, r.response_sealed, r.expires_at, r.lease_expires_at,
                            r.recovery_point, r.attempt;
      END $$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP FUNCTION claim_idempotency_key(uuid, text, text, timestamptz)`);
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
    await db.query(`DROP INDEX ix_idempotency_records_unfinished`);
    // What the old schema cannot hold: unfinished operations, sealed answers (the old code would
    // send them sealed) and operator keys (no company).
    await db.query(`
      DELETE FROM idempotency_records
       WHERE state NOT IN ('completed', 'failed_final') OR response_sealed
          OR company_id NOT IN (SELECT id FROM companies)`);
    await db.query(`
      ALTER TABLE idempotency_records
        DROP CONSTRAINT ck_idempotency_records_state,
        DROP CONSTRAINT ck_idempotency_records_response,
        DROP CONSTRAINT ck_idempotency_records_lease,
        DROP CONSTRAINT ck_idempotency_records_recovery_point,
        DROP CONSTRAINT ck_idempotency_records_attempt`);
    await db.query(`UPDATE idempotency_records SET response_headers = response_headers - 'Content-Type'`);
    await db.query(`
      ALTER TABLE idempotency_records
        DROP COLUMN state,
        DROP COLUMN lease_expires_at,
        DROP COLUMN recovery_point,
        DROP COLUMN attempt,
        DROP COLUMN response_sealed,
        DROP COLUMN updated_at,
        ALTER COLUMN response_status SET NOT NULL,
        ALTER COLUMN response_headers SET NOT NULL,
        ALTER COLUMN response_body SET NOT NULL`);
    await db.query(`
      ALTER TABLE idempotency_records
        ADD CONSTRAINT idempotency_records_company_id_fkey FOREIGN KEY (company_id) REFERENCES companies (id)`);
  }
}
