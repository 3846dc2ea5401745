import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Provider events, refunds and reconciliation (issue 13).
 * - `provider_events`: each webhook of the payment provider, recorded once by (provider, event id)
 *   — with the company its data names, first, as every tenant key — in the transaction that applies
 *   it, or parked (its payload kept) until it can be applied.
 * - `payment_refunds`: a refund of a payment at the provider, booked once per provider refund id.
 * - `settlements.source`: `api` (pushed with POST /v1/settlements/create: clears receivables) or
 *   `provider` (imported from `payout.paid`: clears provider clearing, which the payments filled).
 * - `reconciliation_runs` and their `reconciliation_discrepancies`.
 */
export class ProviderEvents1766300000000 implements MigrationInterface {
  name = 'ProviderEvents1766300000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE provider_events (
        company_id       uuid NOT NULL REFERENCES companies (id),
        provider         text NOT NULL CHECK (provider ~ '^[a-z0-9_]{1,50}$'),
        event_id         text NOT NULL CHECK (length(event_id) BETWEEN 1 AND 255),
        type             text NOT NULL CHECK (length(type) BETWEEN 1 AND 100),
        status           text NOT NULL,
        -- Why it was parked or ignored (null once applied).
        reason           text CHECK (length(reason) BETWEEN 1 AND 500),
        payload          jsonb NOT NULL,
        received_at      timestamptz NOT NULL,
        applied_at       timestamptz,
        attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        next_attempt_at  timestamptz,
        -- One row per provider event, for ever: a repeat finds it and applies nothing. The event id
        -- is the provider's (unique there); the company comes from the signed data, so an event
        -- always lands under the same company.
        CONSTRAINT pk_provider_events PRIMARY KEY (company_id, provider, event_id),
        CONSTRAINT ck_provider_events_status CHECK (status IN ('applied', 'parked', 'ignored')),
        CONSTRAINT ck_provider_events_parked CHECK ((status = 'parked') = (next_attempt_at IS NOT NULL)),
        CONSTRAINT ck_provider_events_applied CHECK ((status = 'applied') = (applied_at IS NOT NULL))
      )`);
    // The worker's retry of parked events: only parked rows, by due time.
    await db.query(
      `CREATE INDEX ix_provider_events_parked ON provider_events (next_attempt_at) WHERE status = 'parked'`,
    );

    await db.query(`
      CREATE TABLE payment_refunds (
        company_id          uuid NOT NULL REFERENCES companies (id),
        id                  uuid NOT NULL,
        payment_id          uuid NOT NULL,
        invoice_id          uuid NOT NULL,
        amount              bigint NOT NULL CHECK (amount BETWEEN 1 AND 9007199254740991),
        currency            char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        provider            text NOT NULL CHECK (provider ~ '^[a-z0-9_]{1,50}$'),
        provider_refund_id  text NOT NULL CHECK (length(provider_refund_id) BETWEEN 1 AND 255),
        provider_charge_id  text NOT NULL CHECK (length(provider_charge_id) BETWEEN 1 AND 255),
        refunded_at         timestamptz NOT NULL,
        created_at          timestamptz NOT NULL,
        CONSTRAINT pk_payment_refunds PRIMARY KEY (company_id, id),
        CONSTRAINT fk_payment_refunds_payment FOREIGN KEY (company_id, payment_id) REFERENCES payments (company_id, id),
        CONSTRAINT fk_payment_refunds_invoice FOREIGN KEY (company_id, invoice_id) REFERENCES invoices (company_id, id),
        -- One booking per provider refund, whichever event (or reconciliation run) brings it first.
        CONSTRAINT uq_payment_refunds_company_provider_refund UNIQUE (company_id, provider, provider_refund_id)
      )`);
    await db.query(
      `CREATE INDEX ix_payment_refunds_company_payment ON payment_refunds (company_id, payment_id, created_at)`,
    );
    await db.query(`
      CREATE TRIGGER trg_payment_refunds_immutable BEFORE UPDATE OR DELETE ON payment_refunds
      FOR EACH ROW EXECUTE FUNCTION forbid_row_changes()`);

    // A payout names its charges by the provider's id: it is imported through this lookup.
    await db.query(`
      CREATE INDEX ix_payments_company_charge ON payments (company_id, provider, provider_charge_id)
       WHERE provider_charge_id IS NOT NULL`);

    await db.query(`ALTER TABLE settlements ADD COLUMN source text NOT NULL DEFAULT 'api'`);
    await db.query(
      `ALTER TABLE settlements ADD CONSTRAINT ck_settlements_source CHECK (source IN ('api', 'provider'))`,
    );

    await db.query(`
      CREATE TABLE reconciliation_runs (
        company_id    uuid NOT NULL REFERENCES companies (id),
        id            uuid NOT NULL,
        provider      text NOT NULL CHECK (provider ~ '^[a-z0-9_]{1,50}$'),
        range_from    timestamptz NOT NULL,
        range_to      timestamptz NOT NULL,
        status        text NOT NULL,
        trigger       text NOT NULL,
        -- The key of the run's create (the scheduled runs' are their window): a retry resumes it.
        idempotency_key text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
        created_at    timestamptz NOT NULL,
        completed_at  timestamptz,
        -- What the completed run compared: { charges, payouts, payments }.
        counts        jsonb,
        CONSTRAINT pk_reconciliation_runs PRIMARY KEY (company_id, id),
        CONSTRAINT ck_reconciliation_runs_range CHECK (range_from < range_to),
        CONSTRAINT ck_reconciliation_runs_status CHECK (status IN ('running', 'completed')),
        CONSTRAINT ck_reconciliation_runs_trigger CHECK (trigger IN ('api', 'schedule')),
        CONSTRAINT ck_reconciliation_runs_completed CHECK ((status = 'completed') = (completed_at IS NOT NULL))
      )`);
    await db.query(
      `CREATE INDEX ix_reconciliation_runs_company_completed ON reconciliation_runs (company_id, completed_at)`,
    );
    // A key resumes the one run it has in flight.
    await db.query(`
      CREATE UNIQUE INDEX uq_reconciliation_runs_company_running_key
          ON reconciliation_runs (company_id, idempotency_key) WHERE status = 'running'`);
    await db.query(`
      CREATE TABLE reconciliation_discrepancies (
        company_id        uuid NOT NULL REFERENCES companies (id),
        run_id            uuid NOT NULL,
        position          integer NOT NULL CHECK (position >= 1),
        kind              text NOT NULL,
        resolution        text NOT NULL,
        object_type       text NOT NULL,
        provider_object_id text CHECK (length(provider_object_id) BETWEEN 1 AND 255),
        local_id          uuid,
        provider_value    text CHECK (length(provider_value) <= 255),
        local_value       text CHECK (length(local_value) <= 255),
        detail            text NOT NULL CHECK (length(detail) BETWEEN 1 AND 1000),
        -- When a run first found this discrepancy (kept from run to run while it stays open).
        first_seen_at     timestamptz NOT NULL,
        CONSTRAINT pk_reconciliation_discrepancies PRIMARY KEY (company_id, run_id, position),
        CONSTRAINT fk_reconciliation_discrepancies_run FOREIGN KEY (company_id, run_id)
          REFERENCES reconciliation_runs (company_id, id),
        CONSTRAINT ck_reconciliation_discrepancies_kind CHECK (
          kind IN ('missing_locally', 'missing_at_provider', 'amount_mismatch', 'status_mismatch')),
        CONSTRAINT ck_reconciliation_discrepancies_resolution CHECK (resolution IN ('auto_resolved', 'needs_review')),
        CONSTRAINT ck_reconciliation_discrepancies_object CHECK (object_type IN ('charge', 'refund', 'payout'))
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`
      DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM payment_refunds) OR EXISTS (SELECT 1 FROM settlements WHERE source = 'provider') THEN
          RAISE EXCEPTION 'refunds or imported payouts exist; the previous schema cannot hold them';
        END IF;
      END $$`);
    await db.query(`DELETE FROM idempotency_records WHERE operation = 'reconciliation.runs.create'`);
    await db.query(`DROP TABLE reconciliation_discrepancies`);
    await db.query(`DROP TABLE reconciliation_runs`);
    await db.query(`ALTER TABLE settlements DROP CONSTRAINT ck_settlements_source`);
    await db.query(`ALTER TABLE settlements DROP COLUMN source`);
    await db.query(`DROP INDEX ix_payments_company_charge`);
    await db.query(`DROP TABLE payment_refunds`);
    await db.query(`DROP TABLE provider_events`);
  }
}
