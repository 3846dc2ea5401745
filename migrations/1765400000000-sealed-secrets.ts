import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook signing secrets are stored sealed (AES-256-GCM under SECRETS_KEY, see libs/secrets):
 * `sealed:v1:<key id>:<iv>:<ciphertext ‖ tag>`. Plaintext `whsec_…` stays allowed for the rows
 * written before: a migration has no key to encrypt them with, so the application seals them at
 * boot (SealStoredSecretsHandler), and processes of the previous version may still insert them
 * during a rolling upgrade.
 */
export class SealedSecrets1765400000000 implements MigrationInterface {
  name = 'SealedSecrets1765400000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_secret_check`);
    // Exactly the two forms the application reads: sealed (iv 12 bytes = 16 characters, data at
    // least the 16-byte tag), or a legacy plaintext secret awaiting its seal.
    await db.query(`
      ALTER TABLE webhook_endpoints ADD CONSTRAINT ck_webhook_endpoints_secret CHECK (
        secret ~ '^sealed:v1:[A-Za-z0-9_-]{8}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22,}$'
        OR secret ~ '^whsec_[A-Za-z0-9+/]{32,}={0,2}$')`);
    await db.query(`
      COMMENT ON COLUMN webhook_endpoints.secret IS
        'Standard Webhooks signing secret, sealed under SECRETS_KEY (sealed:v1:…); whsec_… only until sealed at boot'`);
  }

  async down(db: QueryRunner): Promise<void> {
    // The previous schema can only hold plaintext, and SQL cannot decrypt: refuse rather than
    // leave secrets that no process of the previous version can use.
    await db.query(`
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM webhook_endpoints WHERE secret LIKE 'sealed:%') THEN
          RAISE EXCEPTION 'webhook_endpoints holds sealed secrets; the previous schema stores them in clear only'
            USING HINT = 'Replace those endpoints (or unseal their secrets with the application''s key) before reverting.';
        END IF;
      END $$`);
    await db.query(`COMMENT ON COLUMN webhook_endpoints.secret IS NULL`);
    await db.query(`ALTER TABLE webhook_endpoints DROP CONSTRAINT ck_webhook_endpoints_secret`);
    await db.query(`
      ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_secret_check
        CHECK (secret ~ '^whsec_[A-Za-z0-9+/]{32,}={0,2}$')`);
  }
}
