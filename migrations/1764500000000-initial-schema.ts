import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Foundation schema: tenants, idempotency records, invoices with gapless numbering, and a
 * double-entry ledger. Invariants live here as well as in code: every table carries
 * company_id, documents are immutable, journal entries cannot commit unbalanced.
 */
export class InitialSchema1764500000000 implements MigrationInterface {
  name = 'InitialSchema1764500000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE companies (
        id            uuid PRIMARY KEY,
        name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        country_code  char(2) NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
        currency      char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        created_at    timestamptz NOT NULL DEFAULT now()
      )`);

    await db.query(`
      CREATE TABLE api_keys (
        id          uuid PRIMARY KEY,
        company_id  uuid NOT NULL REFERENCES companies (id),
        -- SHA-256 of the full key: keys are 256-bit random, so a fast hash is enough and
        -- the plaintext is never stored.
        key_hash    bytea NOT NULL CHECK (octet_length(key_hash) = 32),
        key_prefix  text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        revoked_at  timestamptz,
        CONSTRAINT uq_api_keys_key_hash UNIQUE (key_hash)
      )`);
    await db.query(`CREATE INDEX ix_api_keys_company ON api_keys (company_id)`);

    await db.query(`
      CREATE TABLE idempotency_records (
        company_id        uuid NOT NULL REFERENCES companies (id),
        operation         text NOT NULL,
        idempotency_key   text NOT NULL CHECK (length(idempotency_key) BETWEEN 1 AND 255),
        fingerprint       bytea NOT NULL CHECK (octet_length(fingerprint) = 32),
        response_status   smallint NOT NULL CHECK (response_status BETWEEN 200 AND 499),
        response_headers  jsonb NOT NULL DEFAULT '{}'::jsonb,
        response_body     text NOT NULL,
        created_at        timestamptz NOT NULL DEFAULT now(),
        expires_at        timestamptz NOT NULL,
        -- The scope of a key is (company, operation): the same key in another company or on
        -- another route is a different key. This constraint is the last line of defence
        -- behind the per-key advisory lock.
        CONSTRAINT pk_idempotency_records PRIMARY KEY (company_id, operation, idempotency_key)
      )`);
    // The purge job walks expired records oldest first in small batches.
    await db.query(`CREATE INDEX ix_idempotency_records_expires_at ON idempotency_records (expires_at)`);

    await db.query(`
      CREATE TABLE document_sequences (
        company_id  uuid NOT NULL REFERENCES companies (id),
        series      text NOT NULL,
        last_value  bigint NOT NULL CHECK (last_value >= 0),
        CONSTRAINT pk_document_sequences PRIMARY KEY (company_id, series)
      )`);

    await db.query(`
      CREATE TABLE invoices (
        id              uuid PRIMARY KEY,
        company_id      uuid NOT NULL REFERENCES companies (id),
        series          text NOT NULL CHECK (series ~ '^[A-Z0-9]{1,10}$'),
        sequence        bigint NOT NULL CHECK (sequence > 0),
        number          text NOT NULL,
        status          text NOT NULL DEFAULT 'issued' CHECK (status IN ('issued')),
        order_id        text CHECK (length(order_id) BETWEEN 1 AND 100),
        currency        char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        issue_date      date NOT NULL,
        due_date        date,
        customer        jsonb NOT NULL,
        notes           text,
        vat_breakdown   jsonb NOT NULL,
        net_total       bigint NOT NULL CHECK (net_total >= 0),
        vat_total       bigint NOT NULL CHECK (vat_total >= 0),
        gross_total     bigint NOT NULL,
        credited_total  bigint NOT NULL DEFAULT 0,
        paid_total      bigint NOT NULL DEFAULT 0,
        created_at      timestamptz NOT NULL,
        CONSTRAINT ck_invoices_gross CHECK (gross_total = net_total + vat_total),
        CONSTRAINT ck_invoices_credited CHECK (credited_total BETWEEN 0 AND gross_total),
        CONSTRAINT ck_invoices_paid CHECK (paid_total BETWEEN 0 AND gross_total - credited_total),
        CONSTRAINT ck_invoices_due_date CHECK (due_date IS NULL OR due_date >= issue_date),
        -- Gapless numbering is guaranteed by document_sequences; this makes a duplicate
        -- number impossible even if that code were wrong.
        CONSTRAINT uq_invoices_company_series_sequence UNIQUE (company_id, series, sequence)
      )`);
    // One invoice per order, for ever: the business key outlives the idempotency window.
    await db.query(`
      CREATE UNIQUE INDEX uq_invoices_company_order ON invoices (company_id, order_id)
      WHERE order_id IS NOT NULL`);
    await db.query(`CREATE INDEX ix_invoices_company_created ON invoices (company_id, created_at)`);

    await db.query(`
      CREATE TABLE invoice_lines (
        invoice_id   uuid NOT NULL REFERENCES invoices (id),
        company_id   uuid NOT NULL REFERENCES companies (id),
        position     integer NOT NULL CHECK (position BETWEEN 1 AND 500),
        description  text NOT NULL,
        quantity     numeric(20, 4) NOT NULL CHECK (quantity > 0),
        unit_price   bigint NOT NULL CHECK (unit_price BETWEEN 0 AND 1000000000000),
        vat_rate     numeric(5, 2) NOT NULL CHECK (vat_rate BETWEEN 0 AND 100),
        net_amount   bigint NOT NULL CHECK (net_amount >= 0),
        CONSTRAINT pk_invoice_lines PRIMARY KEY (invoice_id, position)
      )`);

    // Issued documents are immutable. Only the running totals that later documents
    // (credit notes, settlements) maintain may change, and only within their CHECKs.
    await db.query(`
      CREATE FUNCTION forbid_invoice_changes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          RAISE EXCEPTION 'issued invoice % cannot be deleted', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        IF (NEW.id, NEW.company_id, NEW.series, NEW.sequence, NEW.number, NEW.status,
            NEW.order_id, NEW.currency, NEW.issue_date, NEW.due_date, NEW.customer, NEW.notes,
            NEW.vat_breakdown, NEW.net_total, NEW.vat_total, NEW.gross_total, NEW.created_at)
           IS DISTINCT FROM
           (OLD.id, OLD.company_id, OLD.series, OLD.sequence, OLD.number, OLD.status,
            OLD.order_id, OLD.currency, OLD.issue_date, OLD.due_date, OLD.customer, OLD.notes,
            OLD.vat_breakdown, OLD.net_total, OLD.vat_total, OLD.gross_total, OLD.created_at)
        THEN
          RAISE EXCEPTION 'issued invoice % is immutable; correct it with a credit note', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER trg_invoices_immutable BEFORE UPDATE OR DELETE ON invoices
      FOR EACH ROW EXECUTE FUNCTION forbid_invoice_changes()`);

    await db.query(`
      CREATE FUNCTION forbid_row_changes() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION '% rows are immutable', TG_TABLE_NAME
          USING ERRCODE = 'integrity_constraint_violation';
      END $$`);
    await db.query(`
      CREATE TRIGGER trg_invoice_lines_immutable BEFORE UPDATE OR DELETE ON invoice_lines
      FOR EACH ROW EXECUTE FUNCTION forbid_row_changes()`);

    // Row triggers do not fire on TRUNCATE; these statement triggers close that door too.
    await db.query(`
      CREATE FUNCTION forbid_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION '% cannot be truncated: issued documents are permanent', TG_TABLE_NAME
          USING ERRCODE = 'integrity_constraint_violation';
      END $$`);
    for (const table of ['invoices', 'invoice_lines']) {
      await db.query(`
        CREATE TRIGGER trg_${table}_no_truncate BEFORE TRUNCATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION forbid_truncate()`);
    }

    await db.query(`
      CREATE TABLE journal_entries (
        id           uuid PRIMARY KEY,
        company_id   uuid NOT NULL REFERENCES companies (id),
        -- Commit-ordered cursor for listing; gaps are harmless here (not a document number).
        seq          bigint GENERATED ALWAYS AS IDENTITY,
        currency     char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        source_type  text NOT NULL,
        source_id    uuid NOT NULL,
        memo         text NOT NULL,
        posted_at    timestamptz NOT NULL,
        -- Fixed at posting: the balance check also requires exactly this many lines, so lines
        -- cannot be added to a committed entry later, not even a balanced pair.
        line_count   smallint NOT NULL CHECK (line_count >= 2),
        CONSTRAINT uq_journal_entries_seq UNIQUE (seq),
        -- A document posts exactly one entry of each kind.
        CONSTRAINT uq_journal_entries_source UNIQUE (company_id, source_type, source_id)
      )`);
    await db.query(`CREATE INDEX ix_journal_entries_company_seq ON journal_entries (company_id, seq)`);

    await db.query(`
      CREATE TABLE journal_lines (
        entry_id    uuid NOT NULL REFERENCES journal_entries (id),
        company_id  uuid NOT NULL REFERENCES companies (id),
        line_no     smallint NOT NULL CHECK (line_no > 0),
        account     text NOT NULL CHECK (account ~ '^[a-z_]{1,50}$'),
        debit       bigint NOT NULL DEFAULT 0 CHECK (debit >= 0),
        credit      bigint NOT NULL DEFAULT 0 CHECK (credit >= 0),
        CONSTRAINT ck_journal_lines_one_side CHECK ((debit = 0) <> (credit = 0)),
        CONSTRAINT pk_journal_lines PRIMARY KEY (entry_id, line_no)
      )`);
    await db.query(`CREATE INDEX ix_journal_lines_company_account ON journal_lines (company_id, account)`);
    await db.query(`
      CREATE TRIGGER trg_journal_entries_immutable BEFORE UPDATE OR DELETE ON journal_entries
      FOR EACH ROW EXECUTE FUNCTION forbid_row_changes()`);
    await db.query(`
      CREATE TRIGGER trg_journal_lines_immutable BEFORE UPDATE OR DELETE ON journal_lines
      FOR EACH ROW EXECUTE FUNCTION forbid_row_changes()`);
    for (const table of ['journal_entries', 'journal_lines']) {
      await db.query(`
        CREATE TRIGGER trg_${table}_no_truncate BEFORE TRUNCATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION forbid_truncate()`);
    }

    // Checked at COMMIT (deferred), once all lines of the entry are in: an entry must have
    // exactly its declared lines (at least two) and debits must equal credits, or the whole
    // transaction fails.
    // Fired for new entries and for lines added later to an existing entry.
    await db.query(`
      CREATE FUNCTION assert_journal_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        target uuid;
        expected_lines integer;
        lines_count integer;
        debits numeric;
        credits numeric;
      BEGIN
        IF TG_TABLE_NAME = 'journal_entries' THEN
          target := NEW.id;
        ELSE
          target := NEW.entry_id;
        END IF;
        SELECT line_count INTO expected_lines FROM journal_entries WHERE id = target;
        SELECT count(*), coalesce(sum(debit), 0), coalesce(sum(credit), 0)
          INTO lines_count, debits, credits
          FROM journal_lines WHERE entry_id = target;
        IF lines_count <> expected_lines OR debits <> credits THEN
          RAISE EXCEPTION 'journal entry % is unbalanced or incomplete (% of % lines, debit %, credit %)',
            target, lines_count, expected_lines, debits, credits
            USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
      END $$`);
    await db.query(`
      CREATE CONSTRAINT TRIGGER trg_journal_entries_balanced
      AFTER INSERT ON journal_entries DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION assert_journal_entry_balanced()`);
    await db.query(`
      CREATE CONSTRAINT TRIGGER trg_journal_lines_balanced
      AFTER INSERT ON journal_lines DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION assert_journal_entry_balanced()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE journal_lines`);
    await db.query(`DROP TABLE journal_entries`);
    await db.query(`DROP FUNCTION assert_journal_entry_balanced()`);
    await db.query(`DROP TABLE invoice_lines`);
    await db.query(`DROP TABLE invoices`);
    await db.query(`DROP FUNCTION forbid_row_changes()`);
    await db.query(`DROP FUNCTION forbid_truncate()`);
    await db.query(`DROP FUNCTION forbid_invoice_changes()`);
    await db.query(`DROP TABLE document_sequences`);
    await db.query(`DROP TABLE idempotency_records`);
    await db.query(`DROP TABLE api_keys`);
    await db.query(`DROP TABLE companies`);
  }
}
