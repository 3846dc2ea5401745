import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Payments through a payment provider (issue 12). A payment is committed `processing` together
 * with its idempotency key (`in_progress`, with a lease) before the provider is called, and its
 * outcome (`succeeded` / `failed`) commits later, with its ledger entry, the invoice's paid total,
 * its event and the finished key. The row is immutable but for that one transition.
 */
export class Payments1765800000000 implements MigrationInterface {
  name = 'Payments1765800000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE payments (
        company_id          uuid NOT NULL REFERENCES companies (id),
        id                  uuid NOT NULL,
        invoice_id          uuid NOT NULL,
        amount              bigint NOT NULL CHECK (amount BETWEEN 1 AND 9007199254740991),
        currency            char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        status              text NOT NULL,
        failure_code        text,
        payment_method      text NOT NULL CHECK (length(payment_method) BETWEEN 1 AND 255),
        provider            text NOT NULL CHECK (provider ~ '^[a-z0-9_]{1,50}$'),
        -- Ours, derived before the call and sent as the provider's idempotency key and reference.
        provider_reference  text NOT NULL CHECK (length(provider_reference) BETWEEN 1 AND 255),
        provider_charge_id  text CHECK (length(provider_charge_id) BETWEEN 1 AND 255),
        -- The key whose operation created the payment: a retry with it resumes the payment.
        idempotency_key     text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
        created_at          timestamptz NOT NULL,
        updated_at          timestamptz NOT NULL,
        CONSTRAINT pk_payments PRIMARY KEY (company_id, id),
        CONSTRAINT fk_payments_invoice FOREIGN KEY (company_id, invoice_id) REFERENCES invoices (company_id, id),
        -- One payment per provider reference: the reference is the provider's idempotency key.
        CONSTRAINT uq_payments_company_provider_reference UNIQUE (company_id, provider, provider_reference),
        CONSTRAINT ck_payments_status CHECK (status IN ('processing', 'succeeded', 'failed')),
        -- A failure says why; nothing else carries a failure code.
        CONSTRAINT ck_payments_failure_code CHECK (
          (status = 'failed') = (failure_code IS NOT NULL) AND length(failure_code) BETWEEN 1 AND 100),
        -- Money moved only with a charge the provider named.
        CONSTRAINT ck_payments_succeeded_charge CHECK (status <> 'succeeded' OR provider_charge_id IS NOT NULL),
        CONSTRAINT ck_payments_updated_at CHECK (updated_at >= created_at)
      )`);
    // A key resumes the one payment it has in flight; after it finished (and the key expired) the
    // same key may start another payment.
    await db.query(`
      CREATE UNIQUE INDEX uq_payments_company_processing_key ON payments (company_id, idempotency_key)
       WHERE status = 'processing'`);
    // Lists per company and per invoice in creation order; the amount still processing per invoice.
    await db.query(`CREATE INDEX ix_payments_company_created ON payments (company_id, created_at, id)`);
    await db.query(
      `CREATE INDEX ix_payments_company_invoice ON payments (company_id, invoice_id, created_at, id)`,
    );

    // Immutable but for the outcome: processing → succeeded | failed, once, with the provider's
    // charge id, the failure code and the time of the outcome. No deletes.
    await db.query(`
      CREATE FUNCTION guard_payment_changes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          RAISE EXCEPTION 'payment % cannot be deleted', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF OLD.status <> 'processing' OR NEW.status NOT IN ('succeeded', 'failed')
           OR (NEW.company_id, NEW.id, NEW.invoice_id, NEW.amount, NEW.currency, NEW.payment_method,
               NEW.provider, NEW.provider_reference, NEW.idempotency_key, NEW.created_at)
              IS DISTINCT FROM
              (OLD.company_id, OLD.id, OLD.invoice_id, OLD.amount, OLD.currency, OLD.payment_method,
               OLD.provider, OLD.provider_reference, OLD.idempotency_key, OLD.created_at)
        THEN
          RAISE EXCEPTION 'payment % is immutable but for its outcome (processing → succeeded | failed)', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER trg_payments_guard BEFORE UPDATE OR DELETE ON payments
      FOR EACH ROW EXECUTE FUNCTION guard_payment_changes()`);
    await db.query(`
      CREATE TRIGGER trg_payments_no_truncate BEFORE TRUNCATE ON payments
      FOR EACH STATEMENT EXECUTE FUNCTION forbid_truncate()`);

    // The recovery looks for unfinished operations of one kind nobody holds:
    // ix_idempotency_records_unfinished (IdempotencyStates1765300000000) holds only those rows.
  }

  async down(db: QueryRunner): Promise<void> {
    // A payment is money moved at the provider and may carry an (immutable) ledger entry: the
    // previous schema cannot hold it, so refuse rather than forget it.
    await db.query(`
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM payments) THEN
          RAISE EXCEPTION 'payments exist; the previous schema cannot hold them (charges at the provider, ledger entries)';
        END IF;
      END $$`);
    await db.query(`DELETE FROM idempotency_records WHERE operation = 'payments.create'`);
    await db.query(`DROP TABLE payments`);
    await db.query(`DROP FUNCTION guard_payment_changes()`);
  }
}
