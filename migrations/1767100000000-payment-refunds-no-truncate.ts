import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `payment_refunds` back journal entries (each refund posts one) like the other ledger-backed
 * tables: besides its row trigger (no UPDATE or DELETE), TRUNCATE is refused too.
 */
export class PaymentRefundsNoTruncate1767100000000 implements MigrationInterface {
  name = 'PaymentRefundsNoTruncate1767100000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TRIGGER trg_payment_refunds_no_truncate BEFORE TRUNCATE ON payment_refunds
      FOR EACH STATEMENT EXECUTE FUNCTION forbid_truncate()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER trg_payment_refunds_no_truncate ON payment_refunds`);
  }
}
