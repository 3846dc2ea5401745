import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Credit notes, settlements of provider payouts, and purchase invoices. Each carries a
 * business key that outlives idempotency keys: one settlement per payout, one purchase invoice
 * per supplier document. Credit notes are immutable and have their own gapless series.
 */
export class CreditNotesSettlementsPurchases1764600000000 implements MigrationInterface {
  name = 'CreditNotesSettlementsPurchases1764600000000';

  async up(db: QueryRunner): Promise<void> {
    // A paid invoice can still be credited (the customer is then owed a refund), so paid and
    // credited are bounded separately by the gross total, not jointly.
    await db.query(`ALTER TABLE invoices DROP CONSTRAINT ck_invoices_paid`);
    await db.query(
      `ALTER TABLE invoices ADD CONSTRAINT ck_invoices_paid CHECK (paid_total BETWEEN 0 AND gross_total)`,
    );

    await db.query(`
      CREATE TABLE credit_notes (
        id              uuid PRIMARY KEY,
        company_id      uuid NOT NULL REFERENCES companies (id),
        invoice_id      uuid NOT NULL REFERENCES invoices (id),
        series          text NOT NULL CHECK (series ~ '^[A-Z0-9]{1,10}$'),
        sequence        bigint NOT NULL CHECK (sequence > 0),
        number          text NOT NULL,
        reason          text NOT NULL CHECK (reason IN ('duplicate', 'fraudulent', 'order_change',
                                                         'product_unsatisfactory', 'other')),
        memo            text,
        currency        char(3) NOT NULL,
        vat_breakdown   jsonb NOT NULL,
        net_total       bigint NOT NULL CHECK (net_total >= 0),
        vat_total       bigint NOT NULL CHECK (vat_total >= 0),
        gross_total     bigint NOT NULL CHECK (gross_total > 0),
        created_at      timestamptz NOT NULL,
        CONSTRAINT ck_credit_notes_gross CHECK (gross_total = net_total + vat_total),
        CONSTRAINT uq_credit_notes_company_series_sequence UNIQUE (company_id, series, sequence)
      )`);
    await db.query(`CREATE INDEX ix_credit_notes_invoice ON credit_notes (invoice_id)`);
    await db.query(`
      CREATE TABLE credit_note_lines (
        credit_note_id  uuid NOT NULL REFERENCES credit_notes (id),
        company_id      uuid NOT NULL REFERENCES companies (id),
        position        integer NOT NULL CHECK (position BETWEEN 1 AND 500),
        description     text NOT NULL,
        quantity        numeric(20, 4) NOT NULL CHECK (quantity > 0),
        unit_price      bigint NOT NULL CHECK (unit_price >= 0),
        vat_rate        numeric(5, 2) NOT NULL CHECK (vat_rate BETWEEN 0 AND 100),
        net_amount      bigint NOT NULL CHECK (net_amount >= 0),
        CONSTRAINT pk_credit_note_lines PRIMARY KEY (credit_note_id, position)
      )`);

    await db.query(`
      CREATE TABLE settlements (
        id                uuid PRIMARY KEY,
        company_id        uuid NOT NULL REFERENCES companies (id),
        payout_id         text NOT NULL CHECK (length(payout_id) BETWEEN 1 AND 255),
        currency          char(3) NOT NULL,
        paid_at           timestamptz NOT NULL,
        fee_amount        bigint NOT NULL CHECK (fee_amount >= 0),
        allocated_total   bigint NOT NULL CHECK (allocated_total > 0),
        created_at        timestamptz NOT NULL,
        CONSTRAINT ck_settlements_fee CHECK (fee_amount <= allocated_total),
        -- One settlement per provider payout, for ever: outlives every idempotency key.
        CONSTRAINT uq_settlements_company_payout UNIQUE (company_id, payout_id)
      )`);
    await db.query(`CREATE INDEX ix_settlements_company_created ON settlements (company_id, created_at, id)`);
    await db.query(`
      CREATE TABLE settlement_allocations (
        settlement_id  uuid NOT NULL REFERENCES settlements (id),
        company_id     uuid NOT NULL REFERENCES companies (id),
        invoice_id     uuid NOT NULL REFERENCES invoices (id),
        amount         bigint NOT NULL CHECK (amount > 0),
        CONSTRAINT pk_settlement_allocations PRIMARY KEY (settlement_id, invoice_id)
      )`);
    await db.query(`CREATE INDEX ix_settlement_allocations_invoice ON settlement_allocations (invoice_id)`);

    await db.query(`
      CREATE TABLE purchase_invoices (
        id                 uuid PRIMARY KEY,
        company_id         uuid NOT NULL REFERENCES companies (id),
        supplier           jsonb NOT NULL,
        -- 'vat:<VAT id>' or 'name:<normalized name>': who issued the document.
        supplier_key       text NOT NULL,
        -- As printed by the supplier (echoed by the API) …
        document_number    text NOT NULL CHECK (length(document_number) BETWEEN 1 AND 100),
        -- … and as compared: upper-cased, white space removed ("inv 001" = "INV001").
        document_key       text NOT NULL CHECK (length(document_key) BETWEEN 1 AND 200),
        currency           char(3) NOT NULL,
        issue_date         date NOT NULL,
        due_date           date,
        notes              text,
        vat_breakdown      jsonb NOT NULL,
        net_total          bigint NOT NULL CHECK (net_total >= 0),
        vat_total          bigint NOT NULL CHECK (vat_total >= 0),
        gross_total        bigint NOT NULL,
        created_at         timestamptz NOT NULL,
        CONSTRAINT ck_purchase_invoices_gross CHECK (gross_total = net_total + vat_total),
        -- One booking per supplier document, for ever (re-imports, other keys, after expiry).
        CONSTRAINT uq_purchase_invoices_company_supplier_document
          UNIQUE (company_id, supplier_key, document_key)
      )`);
    await db.query(
      `CREATE INDEX ix_purchase_invoices_company_created ON purchase_invoices (company_id, created_at, id)`,
    );
    await db.query(`
      CREATE TABLE purchase_invoice_lines (
        purchase_invoice_id  uuid NOT NULL REFERENCES purchase_invoices (id),
        company_id           uuid NOT NULL REFERENCES companies (id),
        position             integer NOT NULL CHECK (position BETWEEN 1 AND 500),
        description          text NOT NULL,
        quantity             numeric(20, 4) NOT NULL CHECK (quantity > 0),
        unit_price           bigint NOT NULL CHECK (unit_price BETWEEN 0 AND 1000000000000),
        vat_rate             numeric(5, 2) NOT NULL CHECK (vat_rate BETWEEN 0 AND 100),
        net_amount           bigint NOT NULL CHECK (net_amount >= 0),
        CONSTRAINT pk_purchase_invoice_lines PRIMARY KEY (purchase_invoice_id, position)
      )`);

    for (const table of [
      'credit_notes',
      'credit_note_lines',
      'settlements',
      'settlement_allocations',
      'purchase_invoices',
      'purchase_invoice_lines',
    ]) {
      await db.query(`
        CREATE TRIGGER trg_${table}_immutable BEFORE UPDATE OR DELETE ON ${table}
        FOR EACH ROW EXECUTE FUNCTION forbid_row_changes()`);
      await db.query(`
        CREATE TRIGGER trg_${table}_no_truncate BEFORE TRUNCATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION forbid_truncate()`);
    }
  }

  async down(db: QueryRunner): Promise<void> {
    for (const table of [
      'purchase_invoice_lines',
      'purchase_invoices',
      'settlement_allocations',
      'settlements',
      'credit_note_lines',
      'credit_notes',
    ]) {
      await db.query(`DROP TABLE ${table}`);
    }
    await db.query(`ALTER TABLE invoices DROP CONSTRAINT ck_invoices_paid`);
    await db.query(
      `ALTER TABLE invoices ADD CONSTRAINT ck_invoices_paid CHECK (paid_total BETWEEN 0 AND gross_total - credited_total)`,
    );
  }
}
