import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A finished key remembers the exact bytes of the request that wrote it (their SHA-256), so a
 * retry that sends the same bytes is answered by one indexed read, before validation and
 * normalization. The fingerprint of the normalized request still decides every other case.
 */
export class RequestDigest1765700000000 implements MigrationInterface {
  name = 'RequestDigest1765700000000';

  async up(db: QueryRunner): Promise<void> {
    // NULL for records written before this column and for callers without a raw body (the CLI).
    await db.query(`
      ALTER TABLE idempotency_records ADD COLUMN request_digest bytea
        CONSTRAINT ck_idempotency_records_request_digest CHECK (octet_length(request_digest) = 32)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE idempotency_records DROP COLUMN request_digest`);
  }
}
