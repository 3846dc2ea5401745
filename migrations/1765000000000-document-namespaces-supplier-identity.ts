import type { MigrationInterface, QueryRunner } from 'typeorm';

const BACKFILL_BATCH = 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The supplier name key this migration backfills: a copy of the application's
 * `normalizeSupplierName` (libs/purchasing/src/supplier-key.ts) as of this migration, so the
 * backfilled keys compare equal to what the handler computed for new uploads then. A frozen
 * snapshot: never change it, not even to follow the application. If the application's
 * normalization changes, stored keys need a new migration that re-keys them
 * (test/architecture/migration-snapshots.spec.ts fails until then).
 */
export function supplierNameKeyAsOf1765000000000(name: string): string {
  return (
    name
      .normalize('NFKC')
      .toLowerCase()
      // Lower-casing can leave a string that is no longer NFKC ("İ" → "i̇").
      .normalize('NFKC')
      .replace(/\p{P}+/gu, '')
      .replace(/\s+/gu, ' ')
      .trim()
  );
}

/**
 * 1. Numbering per (company, document type, series). Invoices and credit notes shared a counter
 *    row when an invoice used the series CN, leaving gaps in both. Each type now has its own
 *    counters, and CN is reserved for credit notes so a printed number names one document.
 * 2. Supplier identity. A purchase invoice duplicates another of its company when the document
 *    numbers match and either both VAT ids match, or one side has none and the normalized names
 *    match. That relation is not transitive, so a trigger enforces it under a per-(company,
 *    document number) advisory lock; the unique key on (supplier_key, document_key) stays as
 *    the backstop for the two cases an index can state.
 */
export class DocumentNamespacesSupplierIdentity1765000000000 implements MigrationInterface {
  name = 'DocumentNamespacesSupplierIdentity1765000000000';

  async up(db: QueryRunner): Promise<void> {
    await this.separateNumbering(db);
    await this.enforceSupplierIdentity(db);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER trg_purchase_invoices_supplier_identity ON purchase_invoices`);
    await db.query(`DROP FUNCTION refuse_duplicate_supplier_document()`);
    await db.query(`DROP FUNCTION claim_supplier_document(uuid, text, text, text)`);
    await db.query(`DROP INDEX ix_purchase_invoices_company_document`);
    await db.query(`
      ALTER TABLE purchase_invoices
        DROP CONSTRAINT ck_purchase_invoices_supplier_key,
        DROP CONSTRAINT ck_purchase_invoices_supplier_identity,
        DROP COLUMN supplier_name_key,
        DROP COLUMN supplier_vat_id`);

    await db.query(`ALTER TABLE credit_notes DROP CONSTRAINT ck_credit_notes_series`);
    await db.query(`ALTER TABLE invoices DROP CONSTRAINT ck_invoices_series_not_credit_note`);
    // Back to one counter per (company, series): where both types numbered in one series, the
    // shared counter continues after the higher of the two, so no number is taken twice.
    await db.query(`LOCK TABLE document_sequences IN ACCESS EXCLUSIVE MODE`);
    await db.query(`ALTER TABLE document_sequences DROP CONSTRAINT pk_document_sequences`);
    await db.query(`
      DELETE FROM document_sequences a
       USING document_sequences b
       WHERE a.company_id = b.company_id AND a.series = b.series
         AND a.document_type <> b.document_type
         AND (a.last_value < b.last_value
              OR (a.last_value = b.last_value AND a.document_type = 'credit_note'))`);
    await db.query(`ALTER TABLE document_sequences DROP COLUMN document_type`);
    await db.query(`
      ALTER TABLE document_sequences
        ADD CONSTRAINT pk_document_sequences PRIMARY KEY (company_id, series)`);
  }

  private async separateNumbering(db: QueryRunner): Promise<void> {
    // First: an issuer holding a counter row keeps this waiting until it commits, and none can
    // take a number until this migration commits, so the maxima read below are final.
    await db.query(`LOCK TABLE document_sequences IN ACCESS EXCLUSIVE MODE`);
    await db.query(`ALTER TABLE document_sequences ADD COLUMN document_type text`);
    await db.query(`ALTER TABLE document_sequences DROP CONSTRAINT pk_document_sequences`);
    // Only credit notes were meant to number in CN; every other counter belonged to invoices.
    await db.query(`UPDATE document_sequences SET document_type = 'invoice' WHERE series <> 'CN'`);
    // A shared CN counter splits in two, each continuing after its own type's highest number.
    await db.query(`DELETE FROM document_sequences WHERE series = 'CN'`);
    await db.query(`
      INSERT INTO document_sequences (company_id, document_type, series, last_value)
      SELECT company_id, 'credit_note', series, max(sequence) FROM credit_notes
       GROUP BY company_id, series
      UNION ALL
      SELECT company_id, 'invoice', series, max(sequence) FROM invoices
       WHERE series = 'CN'
       GROUP BY company_id, series`);
    await db.query(`
      ALTER TABLE document_sequences
        ALTER COLUMN document_type SET NOT NULL,
        ADD CONSTRAINT ck_document_sequences_document_type
          CHECK (document_type IN ('invoice', 'credit_note')),
        ADD CONSTRAINT pk_document_sequences PRIMARY KEY (company_id, document_type, series)`);

    await db.query(`ALTER TABLE credit_notes ADD CONSTRAINT ck_credit_notes_series CHECK (series = 'CN')`);
    // Invoices numbered in CN before it was reserved stay valid (they are issued documents and
    // immutable), named one by one. NOT VALID would not do: PostgreSQL checks a NOT VALID
    // CHECK on every UPDATE, so crediting or settling such an invoice (running totals) would fail.
    const legacy = (await db.query(
      `SELECT id::text AS id FROM invoices WHERE series = 'CN' ORDER BY id`,
    )) as Array<{ id: string }>;
    const exempt = legacy.map((row) => {
      if (!UUID.test(row.id)) throw new Error(`unexpected invoice id ${row.id}`);
      return `'${row.id}'::uuid`;
    });
    await db.query(`
      ALTER TABLE invoices ADD CONSTRAINT ck_invoices_series_not_credit_note
        CHECK (series <> 'CN'${exempt.length > 0 ? ` OR id IN (${exempt.join(', ')})` : ''})`);
  }

  private async enforceSupplierIdentity(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE purchase_invoices
        ADD COLUMN supplier_vat_id text
          CONSTRAINT ck_purchase_invoices_supplier_vat_id CHECK (length(supplier_vat_id) > 0),
        ADD COLUMN supplier_name_key text`);

    // Backfill from what each row already says. purchase_invoices is immutable; its trigger is
    // off only inside this transaction, which holds the table lock until COMMIT, so no other
    // session ever sees it off.
    await db.query(`ALTER TABLE purchase_invoices DISABLE TRIGGER trg_purchase_invoices_immutable`);
    await db.query(`
      UPDATE purchase_invoices SET supplier_name_key = substr(supplier_key, 6)
       WHERE supplier_key LIKE 'name:%'`);
    await db.query(`
      UPDATE purchase_invoices SET supplier_vat_id = substr(supplier_key, 5)
       WHERE supplier_key LIKE 'vat:%'`);
    // Names of suppliers identified by VAT id were never normalized: do it here, in batches.
    for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
      const rows = (await db.query(
        `SELECT id::text AS id, supplier->>'name' AS name FROM purchase_invoices
          WHERE supplier_name_key IS NULL AND id > $1
          ORDER BY id LIMIT ${BACKFILL_BATCH}`,
        [after],
      )) as Array<{ id: string; name: string }>;
      if (rows.length === 0) break;
      await db.query(
        `UPDATE purchase_invoices p SET supplier_name_key = v.name_key
           FROM unnest($1::uuid[], $2::text[]) AS v(id, name_key)
          WHERE p.id = v.id`,
        [rows.map((row) => row.id), rows.map((row) => supplierNameKeyAsOf1765000000000(row.name))],
      );
      after = rows[rows.length - 1].id;
    }
    await db.query(`ALTER TABLE purchase_invoices ENABLE TRIGGER trg_purchase_invoices_immutable`);

    await db.query(`
      ALTER TABLE purchase_invoices
        ALTER COLUMN supplier_name_key SET NOT NULL,
        ADD CONSTRAINT ck_purchase_invoices_supplier_identity
          CHECK (supplier_vat_id IS NOT NULL OR supplier_name_key <> ''),
        -- The unique backstop uq_purchase_invoices_company_supplier_document compares
        -- supplier_key: it must say the same as the columns the full rule compares.
        ADD CONSTRAINT ck_purchase_invoices_supplier_key
          CHECK (supplier_key = CASE WHEN supplier_vat_id IS NULL THEN 'name:' || supplier_name_key
                                     ELSE 'vat:' || supplier_vat_id END)`);
    // What the rule looks up: every document of the company with this number.
    await db.query(
      `CREATE INDEX ix_purchase_invoices_company_document ON purchase_invoices (company_id, document_key)`,
    );

    // VOLATILE on purpose: each statement takes a fresh snapshot, so the read after the lock
    // sees what the previous holder of the lock committed. The application calls this before
    // inserting (to answer 409 naming the existing document); the trigger below calls it for
    // every insert, so writers that bypass the application are held to the same rule. Under
    // REPEATABLE READ the read would use the transaction's older snapshot: writers use READ
    // COMMITTED (SERIALIZABLE is also safe: it fails one of two racing inserts).
    await db.query(`
      CREATE FUNCTION claim_supplier_document(p_company_id uuid, p_document_key text,
                                              p_supplier_vat_id text, p_supplier_name_key text)
      RETURNS uuid LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        existing uuid;
      BEGIN
        -- Every document that could be a duplicate shares the number: one lock per number.
        PERFORM pg_advisory_xact_lock(hashtextextended(
          'purchase_invoices' || E'\\n' || p_company_id::text || E'\\n' || p_document_key, 0));
        SELECT p.id INTO existing
          FROM purchase_invoices p
         WHERE p.company_id = p_company_id
           AND p.document_key = p_document_key
           AND (p.supplier_vat_id = p_supplier_vat_id
                OR ((p.supplier_vat_id IS NULL OR p_supplier_vat_id IS NULL)
                    AND p.supplier_name_key = p_supplier_name_key))
         ORDER BY p.created_at, p.id
         LIMIT 1;
        RETURN existing;
      END $$`);
    await db.query(`
      CREATE FUNCTION refuse_duplicate_supplier_document() RETURNS trigger
      LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        existing uuid;
      BEGIN
        existing := claim_supplier_document(NEW.company_id, NEW.document_key,
                                            NEW.supplier_vat_id, NEW.supplier_name_key);
        IF existing IS NOT NULL THEN
          RAISE EXCEPTION 'supplier document % is already recorded as purchase invoice %',
                          NEW.document_key, existing
            USING ERRCODE = 'unique_violation',
                  CONSTRAINT = 'uq_purchase_invoices_supplier_identity',
                  DETAIL = 'Same document number, and the same VAT id, or the same supplier name where one side has no VAT id.';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(`
      CREATE TRIGGER trg_purchase_invoices_supplier_identity BEFORE INSERT ON purchase_invoices
      FOR EACH ROW EXECUTE FUNCTION refuse_duplicate_supplier_document()`);
  }
}
