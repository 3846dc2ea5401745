import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every bounded text field the API accepts is bounded in the schema too, in the one unit both
 * use: Unicode code points (`length()` on text in a UTF-8 database; the API's CodePointLength).
 * Columns that already had such a CHECK (companies.name, invoices.order_id, settlements.payout_id,
 * purchase_invoices.document_number, webhook_endpoints.url …) keep it; these are the fields that
 * had none, including the party fields stored inside the customer/supplier jsonb.
 *
 * NOT VALID: the validator used to skip variation selectors, so rows written before could
 * exceed a bound. They stay readable; every row inserted from now on is checked. (An UPDATE
 * also checks the new row: the running totals of such an old invoice could not be updated.)
 */
const TEXT_BOUNDS: ReadonlyArray<{ table: string; name: string; check: string }> = [
  { table: 'invoices', name: 'ck_invoices_notes_length', check: `length(notes) <= 2000` },
  ...partyBounds('invoices', 'customer'),
  {
    table: 'invoice_lines',
    name: 'ck_invoice_lines_description_length',
    check: `length(description) BETWEEN 1 AND 1000`,
  },
  { table: 'credit_notes', name: 'ck_credit_notes_memo_length', check: `length(memo) <= 2000` },
  {
    table: 'credit_note_lines',
    name: 'ck_credit_note_lines_description_length',
    check: `length(description) BETWEEN 1 AND 1000`,
  },
  { table: 'purchase_invoices', name: 'ck_purchase_invoices_notes_length', check: `length(notes) <= 2000` },
  ...partyBounds('purchase_invoices', 'supplier'),
  {
    table: 'purchase_invoice_lines',
    name: 'ck_purchase_invoice_lines_description_length',
    check: `length(description) BETWEEN 1 AND 1000`,
  },
];

/** The bounded members of a party stored as jsonb (PartyDto): an absent member is NULL and passes. */
function partyBounds(table: string, column: string): Array<{ table: string; name: string; check: string }> {
  return [
    {
      table,
      name: `ck_${table}_${column}_name_length`,
      check: `length(${column} ->> 'name') BETWEEN 1 AND 200`,
    },
    {
      table,
      name: `ck_${table}_${column}_address_length`,
      check: `length(${column} ->> 'address') BETWEEN 1 AND 500`,
    },
    {
      table,
      name: `ck_${table}_${column}_email_length`,
      check: `length(${column} ->> 'email') BETWEEN 1 AND 254`,
    },
  ];
}

export class TextBounds1765100000000 implements MigrationInterface {
  name = 'TextBounds1765100000000';

  async up(db: QueryRunner): Promise<void> {
    for (const { table, name, check } of TEXT_BOUNDS) {
      await db.query(`ALTER TABLE ${table} ADD CONSTRAINT ${name} CHECK (${check}) NOT VALID`);
    }
  }

  async down(db: QueryRunner): Promise<void> {
    for (const { table, name } of [...TEXT_BOUNDS].reverse()) {
      await db.query(`ALTER TABLE ${table} DROP CONSTRAINT ${name}`);
    }
  }
}
