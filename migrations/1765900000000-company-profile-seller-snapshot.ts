import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounting outputs, part 1 (issue 14):
 * - the company profile (legal name, VAT id, registration number, address, IBAN, e-mail, Peppol
 *   id) on `companies`; an unset legal name reads as the company's name, an unset address
 *   country as the company's country;
 * - `seller` on invoices and credit notes: the profile as it was when the document was issued,
 *   immutable like the rest of the document. Documents issued before this migration get the
 *   profile the company has now (there was no earlier one: the name and the country);
 * - `entry_date` on journal entries: the date of the document that posted the entry (an
 *   invoice's or purchase invoice's issue date, a settlement's payout date, else the UTC date of
 *   the posting), so reports can select entries by document date.
 */
export class CompanyProfileSellerSnapshot1765900000000 implements MigrationInterface {
  name = 'CompanyProfileSellerSnapshot1765900000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE companies
        ADD COLUMN legal_name            text CHECK (length(legal_name) BETWEEN 1 AND 200),
        ADD COLUMN vat_id                text CHECK (vat_id ~ '^[A-Z0-9]{2,30}$'),
        ADD COLUMN registration_number   text CHECK (length(registration_number) BETWEEN 1 AND 50),
        ADD COLUMN street                text CHECK (length(street) BETWEEN 1 AND 200),
        ADD COLUMN city                  text CHECK (length(city) BETWEEN 1 AND 100),
        ADD COLUMN postal_code           text CHECK (length(postal_code) BETWEEN 1 AND 20),
        ADD COLUMN address_country_code  char(2) CHECK (address_country_code ~ '^[A-Z]{2}$'),
        ADD COLUMN iban                  text CHECK (iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$'),
        ADD COLUMN email                 text CHECK (length(email) BETWEEN 3 AND 254),
        ADD COLUMN peppol_id             text CHECK (length(peppol_id) BETWEEN 6 AND 60)`);

    // The snapshot of what existing documents were issued with is the oldest profile there is.
    const seller = `jsonb_build_object(
        'legalName', c.name, 'vatId', NULL, 'registrationNumber', NULL,
        'address', jsonb_build_object('street', NULL, 'city', NULL, 'postalCode', NULL,
                                      'countryCode', c.country_code),
        'iban', NULL, 'email', NULL, 'peppolId', NULL)`;
    await db.query(`ALTER TABLE invoices ADD COLUMN seller jsonb`);
    await db.query(`ALTER TABLE credit_notes ADD COLUMN seller jsonb`);
    // The backfill is the one write the immutability triggers must let through.
    await db.query(`ALTER TABLE invoices DISABLE TRIGGER trg_invoices_immutable`);
    await db.query(`ALTER TABLE credit_notes DISABLE TRIGGER trg_credit_notes_immutable`);
    await db.query(`UPDATE invoices i SET seller = ${seller} FROM companies c WHERE c.id = i.company_id`);
    await db.query(`UPDATE credit_notes n SET seller = ${seller} FROM companies c WHERE c.id = n.company_id`);
    await db.query(`ALTER TABLE invoices ENABLE TRIGGER trg_invoices_immutable`);
    await db.query(`ALTER TABLE credit_notes ENABLE TRIGGER trg_credit_notes_immutable`);
    await db.query(`ALTER TABLE invoices ALTER COLUMN seller SET NOT NULL`);
    await db.query(`ALTER TABLE credit_notes ALTER COLUMN seller SET NOT NULL`);
    // Credit notes are immutable row by row already; invoices list their immutable columns.
    await db.query(invoiceImmutability(true));

    await db.query(`ALTER TABLE journal_entries ADD COLUMN entry_date date`);
    await db.query(`ALTER TABLE journal_entries DISABLE TRIGGER trg_journal_entries_immutable`);
    await db.query(`
      UPDATE journal_entries e
         SET entry_date = coalesce(
               (SELECT i.issue_date FROM invoices i
                 WHERE e.source_type = 'invoice' AND i.company_id = e.company_id AND i.id = e.source_id),
               (SELECT p.issue_date FROM purchase_invoices p
                 WHERE e.source_type = 'purchase_invoice' AND p.company_id = e.company_id AND p.id = e.source_id),
               (SELECT (s.paid_at AT TIME ZONE 'UTC')::date FROM settlements s
                 WHERE e.source_type = 'settlement' AND s.company_id = e.company_id AND s.id = e.source_id),
               (e.posted_at AT TIME ZONE 'UTC')::date)`);
    await db.query(`ALTER TABLE journal_entries ENABLE TRIGGER trg_journal_entries_immutable`);
    await db.query(`ALTER TABLE journal_entries ALTER COLUMN entry_date SET NOT NULL`);
    // Reports select a company's entries by document date.
    await db.query(
      `CREATE INDEX ix_journal_entries_company_entry_date ON journal_entries (company_id, entry_date)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX ix_journal_entries_company_entry_date`);
    await db.query(`ALTER TABLE journal_entries DROP COLUMN entry_date`);
    await db.query(invoiceImmutability(false));
    await db.query(`ALTER TABLE credit_notes DROP COLUMN seller`);
    await db.query(`ALTER TABLE invoices DROP COLUMN seller`);
    await db.query(`
      ALTER TABLE companies
        DROP COLUMN legal_name, DROP COLUMN vat_id, DROP COLUMN registration_number, DROP COLUMN street,
        DROP COLUMN city, DROP COLUMN postal_code, DROP COLUMN address_country_code, DROP COLUMN iban,
        DROP COLUMN email, DROP COLUMN peppol_id`);
  }
}

/** The invoice immutability trigger function, with or without the seller snapshot among its columns. */
function invoiceImmutability(withSeller: boolean): string {
  const columns = [
    'id',
    'company_id',
    'series',
    'sequence',
    'number',
    'status',
    'order_id',
    'currency',
    'issue_date',
    'due_date',
    'customer',
    'notes',
    'vat_breakdown',
    'net_total',
    'vat_total',
    'gross_total',
    'created_at',
    ...(withSeller ? ['seller'] : []),
  ];
  const row = (record: string) => columns.map((column) => `${record}.${column}`).join(', ');
  return `
    CREATE OR REPLACE FUNCTION forbid_invoice_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'issued invoice % cannot be deleted', OLD.id
          USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      IF (${row('NEW')}) IS DISTINCT FROM (${row('OLD')}) THEN
        RAISE EXCEPTION 'issued invoice % is immutable; correct it with a credit note', OLD.id
          USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      RETURN NEW;
    END $$`;
}
