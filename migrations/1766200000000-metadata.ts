import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tables whose rows a create route makes, each with the client's `metadata`. */
const TABLES = [
  'invoices',
  'credit_notes',
  'settlements',
  'purchase_invoices',
  'payments',
  'webhook_endpoints',
];

/**
 * `metadata` on every created object (issue 15): the client's string key/values, bounded like
 * the API (`METADATA_LIMITS`), immutable where the row is. Existing rows get `{}`; adding a
 * column with a constant default rewrites no table. Invoices are filterable by metadata
 * (`@>` on a GIN index).
 */
export class Metadata1766200000000 implements MigrationInterface {
  name = 'Metadata1766200000000';

  async up(db: QueryRunner): Promise<void> {
    // At most 20 keys of 1–40 code points without [ ], string values of at most 500.
    await db.query(`
      CREATE FUNCTION is_valid_metadata(m jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT ${METADATA_BOUNDS}
      $$`);
    for (const table of TABLES) {
      await db.query(`
        ALTER TABLE ${table} ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'
          CONSTRAINT ck_${table}_metadata CHECK (is_valid_metadata(metadata))`);
    }
    // ?metadata[key]=value on invoice lists: containment (@>) served by jsonb_path_ops.
    await db.query(`CREATE INDEX ix_invoices_metadata ON invoices USING gin (metadata jsonb_path_ops)`);
    // Issued invoices stay immutable, metadata included (only the running totals change).
    // Payments: immutable but for the outcome, metadata included.
    await replaceGuards(db, { invoice: ', metadata', payment: ', metadata' });
  }

  async down(db: QueryRunner): Promise<void> {
    await replaceGuards(db, { invoice: '', payment: '' });
    await db.query(`DROP INDEX ix_invoices_metadata`);
    for (const table of TABLES) await db.query(`ALTER TABLE ${table} DROP COLUMN metadata`);
    await db.query(`DROP FUNCTION is_valid_metadata(jsonb)`);
  }
}

/**
 * The invoice and payment guards (InitialSchema, Payments; the invoice's `seller` since
 * CompanyProfileSellerSnapshot), with or without the metadata column.
 */
async function replaceGuards(db: QueryRunner, extra: { invoice: string; payment: string }): Promise<void> {
  const invoiceColumns = (row: string) =>
    `${row}.id, ${row}.company_id, ${row}.series, ${row}.sequence, ${row}.number, ${row}.status,
     ${row}.order_id, ${row}.currency, ${row}.issue_date, ${row}.due_date, ${row}.customer, ${row}.notes,
     ${row}.vat_breakdown, ${row}.net_total, ${row}.vat_total, ${row}.gross_total, ${row}.created_at,
     ${row}.seller` + extra.invoice.replace('metadata', `${row}.metadata`);
  await db.query(`
    CREATE OR REPLACE FUNCTION forbid_invoice_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'issued invoice % cannot be deleted', OLD.id
          USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      IF (${invoiceColumns('NEW')}) IS DISTINCT FROM (${invoiceColumns('OLD')}) THEN
        RAISE EXCEPTION 'issued invoice % is immutable; correct it with a credit note', OLD.id
          USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      RETURN NEW;
    END $$`);
  const paymentColumns = (row: string) =>
    `${row}.company_id, ${row}.id, ${row}.invoice_id, ${row}.amount, ${row}.currency, ${row}.payment_method,
     ${row}.provider, ${row}.provider_reference, ${row}.idempotency_key, ${row}.created_at` +
    extra.payment.replace('metadata', `${row}.metadata`);
  await db.query(`
    CREATE OR REPLACE FUNCTION guard_payment_changes() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'payment % cannot be deleted', OLD.id
          USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      IF OLD.status <> 'processing' OR NEW.status NOT IN ('succeeded', 'failed')
         OR (${paymentColumns('NEW')}) IS DISTINCT FROM (${paymentColumns('OLD')})
      THEN
        RAISE EXCEPTION 'payment % is immutable but for its outcome (processing → succeeded | failed)', OLD.id
          USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      RETURN NEW;
    END $$`);
}

/** True when jsonb `m` is metadata within the bounds above. */
export const METADATA_BOUNDS = `
        jsonb_typeof(m) = 'object'
           AND (SELECT count(*) <= 20
                   AND coalesce(bool_and(length(key) BETWEEN 1 AND 40 AND key !~ '[][]'
                                         AND jsonb_typeof(value) = 'string'
                                         AND length(value #>> '{}') <= 500), true)
                  FROM jsonb_each(m))`;
