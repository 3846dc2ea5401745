import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Several API keys per company (issue 15): each with an optional name and a scope, listed in
 * creation order, revocable. A revocation is announced on the `api_key_revoked` channel (the
 * key's hash, hex) when it commits, so every API process drops the key from its verified-key
 * cache at once. Keys are immutable but for that one transition.
 */
export class ApiKeyScopes1766100000000 implements MigrationInterface {
  name = 'ApiKeyScopes1766100000000';

  async up(db: QueryRunner): Promise<void> {
    // Every key that exists was made with a company and can do everything: read_write.
    await db.query(`
      ALTER TABLE api_keys
        ADD COLUMN name text CONSTRAINT ck_api_keys_name CHECK (length(name) BETWEEN 1 AND 100),
        ADD COLUMN scope text NOT NULL DEFAULT 'read_write'
          CONSTRAINT ck_api_keys_scope CHECK (scope IN ('read_write', 'read_only')),
        ADD CONSTRAINT ck_api_keys_revoked_at CHECK (revoked_at IS NULL OR revoked_at >= created_at)`);
    await db.query(`ALTER TABLE api_keys ALTER COLUMN scope DROP DEFAULT`);
    // Lists per company in creation order (keyset pages), replacing the plain company index.
    await db.query(`DROP INDEX ix_api_keys_company`);
    await db.query(`CREATE INDEX ix_api_keys_company_created ON api_keys (company_id, created_at, id)`);

    // Immutable but for the revocation (once); never deleted, so no revocation can be undone by a
    // delete and re-insert of the same hash.
    await db.query(`
      CREATE FUNCTION guard_api_key_changes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          RAISE EXCEPTION 'api key % cannot be deleted; revoke it', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF OLD.revoked_at IS NOT NULL OR NEW.revoked_at IS NULL
           OR (NEW.id, NEW.company_id, NEW.key_hash, NEW.key_prefix, NEW.name, NEW.scope, NEW.created_at)
              IS DISTINCT FROM
              (OLD.id, OLD.company_id, OLD.key_hash, OLD.key_prefix, OLD.name, OLD.scope, OLD.created_at)
        THEN
          RAISE EXCEPTION 'api key % is immutable but for its revocation (once)', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER trg_api_keys_guard BEFORE UPDATE OR DELETE ON api_keys
      FOR EACH ROW EXECUTE FUNCTION guard_api_key_changes()`);
    await db.query(`
      CREATE TRIGGER trg_api_keys_no_truncate BEFORE TRUNCATE ON api_keys
      FOR EACH STATEMENT EXECUTE FUNCTION forbid_truncate()`);

    // NOTIFY is transactional: listeners hear of the revocation when it commits, never before,
    // and never of one that rolled back. A trigger, so a revocation made by hand is announced too.
    await db.query(`
      CREATE FUNCTION announce_api_key_revocation() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('api_key_revoked', encode(NEW.key_hash, 'hex'));
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE TRIGGER trg_api_keys_revoked AFTER UPDATE OF revoked_at ON api_keys
      FOR EACH ROW WHEN (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL)
      EXECUTE FUNCTION announce_api_key_revocation()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER trg_api_keys_revoked ON api_keys`);
    await db.query(`DROP FUNCTION announce_api_key_revocation()`);
    await db.query(`DROP TRIGGER trg_api_keys_no_truncate ON api_keys`);
    await db.query(`DROP TRIGGER trg_api_keys_guard ON api_keys`);
    await db.query(`DROP FUNCTION guard_api_key_changes()`);
    await db.query(`DROP INDEX ix_api_keys_company_created`);
    await db.query(`CREATE INDEX ix_api_keys_company ON api_keys (company_id)`);
    await db.query(`
      ALTER TABLE api_keys
        DROP CONSTRAINT ck_api_keys_revoked_at,
        DROP COLUMN scope,
        DROP COLUMN name`);
  }
}
