import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every key of a tenant table starts with company_id (issue 11, "Scale beyond one process"), so
 * Citus can distribute each of them by company_id, colocated: a company's rows, and the rows
 * its foreign keys join, live on one shard. See docs/scaling.md for each table's key.
 *
 * - Documents, settlements, journal entries, events and webhook rows: primary key (company_id, id)
 *   instead of (id). The UNIQUE (company_id, id) constraints that existed only as foreign-key
 *   targets (events, webhook_endpoints, webhook_deliveries) are then redundant and dropped.
 * - Line tables: (company_id, <document>_id, position), with the foreign key
 *   (company_id, <document>_id) → <document> (company_id, id): a line can no longer name a
 *   document of another company, which the old key (<document>_id) → (id) allowed.
 * - The identity columns that order lists (`seq`) are unique per company, not globally: every
 *   list filters by company, and a global unique index cannot exist on a distributed table.
 * - The balance trigger reads the entry and its lines by (company_id, id).
 * - api_keys is not changed: it is looked up by key hash before the company is known, so it is a
 *   reference table (replicated), exempt by name in test/e2e/tenant-keys.e2e-spec.ts.
 *
 * Order: the foreign keys onto the old keys go first, then the keys are swapped, then the foreign
 * keys are created again on the new ones. Every statement takes its table's ACCESS EXCLUSIVE
 * lock and builds its indexes in this transaction: writes wait for the whole migration (its time
 * grows with the data; docs/scaling.md has a measurement). Existing rows whose lines, credit
 * notes, allocations or deliveries name a parent of another company make it fail, naming the
 * foreign key: such rows are cross-tenant corruption to repair by hand first.
 */
export class TenantKeys1765500000000 implements MigrationInterface {
  name = 'TenantKeys1765500000000';

  async up(db: QueryRunner): Promise<void> {
    // Rebuilding keys of large tables is not subject to the pool's request timeout.
    await db.query(`SET LOCAL statement_timeout = 0`);

    for (const fk of FOREIGN_KEYS) {
      await db.query(`ALTER TABLE ${fk.table} DROP CONSTRAINT ${fk.before.name}`);
    }
    for (const key of KEYS) await swapConstraints(db, key.table, key.before, key.after);
    for (const fk of FOREIGN_KEYS) {
      await db.query(`ALTER TABLE ${fk.table} ADD CONSTRAINT ${fk.after.name} ${fk.after.definition}`);
    }
    for (const index of INDEXES) {
      for (const name of index.before.map((before) => before.name)) await db.query(`DROP INDEX ${name}`);
      for (const after of index.after) await db.query(after.definition);
    }
    await db.query(balanceCheck(true));
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`SET LOCAL statement_timeout = 0`);

    await db.query(balanceCheck(false));
    for (const index of [...INDEXES].reverse()) {
      for (const name of index.after.map((after) => after.name)) await db.query(`DROP INDEX ${name}`);
      for (const before of index.before) await db.query(before.definition);
    }
    for (const fk of [...FOREIGN_KEYS].reverse()) {
      await db.query(`ALTER TABLE ${fk.table} DROP CONSTRAINT ${fk.after.name}`);
    }
    for (const key of [...KEYS].reverse()) await swapConstraints(db, key.table, key.after, key.before);
    for (const fk of [...FOREIGN_KEYS].reverse()) {
      await db.query(`ALTER TABLE ${fk.table} ADD CONSTRAINT ${fk.before.name} ${fk.before.definition}`);
    }
  }
}

/** Drops and adds constraints of one table in one ALTER TABLE (one lock, one pass). */
async function swapConstraints(
  db: QueryRunner,
  table: string,
  drop: readonly Constraint[],
  add: readonly Constraint[],
): Promise<void> {
  await db.query(`
    ALTER TABLE ${table}
      ${[
        ...drop.map((constraint) => `DROP CONSTRAINT ${constraint.name}`),
        ...add.map((constraint) => `ADD CONSTRAINT ${constraint.name} ${constraint.definition}`),
      ].join(',\n      ')}`);
}

interface Constraint {
  name: string;
  /** What follows `ADD CONSTRAINT <name>`, or the whole CREATE INDEX statement for an index. */
  definition: string;
}

/** Primary keys and unique constraints of one table, before and after (swapped in one ALTER TABLE). */
interface TableKeys {
  table: string;
  before: Constraint[];
  after: Constraint[];
}

function primaryKey(name: string, columns: string): Constraint {
  return { name, definition: `PRIMARY KEY (${columns})` };
}

function unique(name: string, columns: string): Constraint {
  return { name, definition: `UNIQUE (${columns})` };
}

/** A document keyed by its id alone before, by (company_id, id) after. */
function companyAndId(table: string, ...more: Array<Pick<TableKeys, 'before' | 'after'>>): TableKeys {
  return {
    table,
    before: [primaryKey(`${table}_pkey`, 'id'), ...more.flatMap((m) => m.before)],
    after: [primaryKey(`pk_${table}`, 'company_id, id'), ...more.flatMap((m) => m.after)],
  };
}

/** A UNIQUE (company_id, id) that served as a foreign-key target: the new primary key is that key. */
function redundantCompanyId(table: string): Pick<TableKeys, 'before' | 'after'> {
  return { before: [unique(`uq_${table}_company_id`, 'company_id, id')], after: [] };
}

/** A list's keyset column: unique per company instead of globally. */
function seqPerCompany(table: string): Pick<TableKeys, 'before' | 'after'> {
  return {
    before: [unique(`uq_${table}_seq`, 'seq')],
    after: [unique(`uq_${table}_company_seq`, 'company_id, seq')],
  };
}

/** A line table: (company_id, document, position) instead of (document, position); same name. */
function lineKey(table: string, documentColumn: string, positionColumn: string): TableKeys {
  return {
    table,
    before: [primaryKey(`pk_${table}`, `${documentColumn}, ${positionColumn}`)],
    after: [primaryKey(`pk_${table}`, `company_id, ${documentColumn}, ${positionColumn}`)],
  };
}

const KEYS: TableKeys[] = [
  companyAndId('invoices'),
  lineKey('invoice_lines', 'invoice_id', 'position'),
  companyAndId('credit_notes'),
  lineKey('credit_note_lines', 'credit_note_id', 'position'),
  companyAndId('purchase_invoices'),
  lineKey('purchase_invoice_lines', 'purchase_invoice_id', 'position'),
  companyAndId('settlements'),
  lineKey('settlement_allocations', 'settlement_id', 'invoice_id'),
  companyAndId('journal_entries', seqPerCompany('journal_entries')),
  lineKey('journal_lines', 'entry_id', 'line_no'),
  companyAndId('events', redundantCompanyId('events')),
  companyAndId(
    'webhook_endpoints',
    redundantCompanyId('webhook_endpoints'),
    seqPerCompany('webhook_endpoints'),
  ),
  companyAndId('webhook_deliveries', redundantCompanyId('webhook_deliveries'), {
    // One delivery per event and endpoint: a re-run fan-out job inserts nothing twice.
    before: [unique('uq_webhook_deliveries_event_endpoint', 'event_id, endpoint_id')],
    after: [unique('uq_webhook_deliveries_company_event_endpoint', 'company_id, event_id, endpoint_id')],
  }),
  companyAndId('webhook_attempts', seqPerCompany('webhook_attempts'), {
    // An attempt is recorded at most once (by its worker or, as abandoned, by the sweeper).
    before: [unique('uq_webhook_attempts_delivery_number', 'delivery_id, attempt_number')],
    after: [unique('uq_webhook_attempts_company_delivery_number', 'company_id, delivery_id, attempt_number')],
  }),
];

interface ForeignKey {
  table: string;
  before: Constraint;
  after: Constraint;
}

/** A reference to a parent document: by its id before, by (company_id, id) after. */
function toParent(table: string, column: string, parent: string, after: string): ForeignKey {
  return {
    table,
    before: {
      name: `${table}_${column}_fkey`,
      definition: `FOREIGN KEY (${column}) REFERENCES ${parent} (id)`,
    },
    after: {
      name: after,
      definition: `FOREIGN KEY (company_id, ${column}) REFERENCES ${parent} (company_id, id)`,
    },
  };
}

/**
 * Already (company_id, …) → (company_id, id), but onto the UNIQUE (company_id, id) dropped here:
 * dropped and created again, onto the primary key (same name and definition).
 */
function ontoPrimaryKey(table: string, name: string, column: string, parent: string): ForeignKey {
  const fk = {
    name,
    definition: `FOREIGN KEY (company_id, ${column}) REFERENCES ${parent} (company_id, id)`,
  };
  return { table, before: fk, after: fk };
}

const FOREIGN_KEYS: ForeignKey[] = [
  toParent('invoice_lines', 'invoice_id', 'invoices', 'fk_invoice_lines_invoice'),
  toParent('credit_notes', 'invoice_id', 'invoices', 'fk_credit_notes_invoice'),
  toParent('credit_note_lines', 'credit_note_id', 'credit_notes', 'fk_credit_note_lines_credit_note'),
  toParent(
    'purchase_invoice_lines',
    'purchase_invoice_id',
    'purchase_invoices',
    'fk_purchase_invoice_lines_purchase_invoice',
  ),
  toParent('settlement_allocations', 'settlement_id', 'settlements', 'fk_settlement_allocations_settlement'),
  toParent('settlement_allocations', 'invoice_id', 'invoices', 'fk_settlement_allocations_invoice'),
  toParent('journal_lines', 'entry_id', 'journal_entries', 'fk_journal_lines_entry'),
  ontoPrimaryKey('webhook_deliveries', 'fk_webhook_deliveries_event', 'event_id', 'events'),
  ontoPrimaryKey('webhook_deliveries', 'fk_webhook_deliveries_endpoint', 'endpoint_id', 'webhook_endpoints'),
  ontoPrimaryKey('webhook_attempts', 'fk_webhook_attempts_delivery', 'delivery_id', 'webhook_deliveries'),
];

function index(name: string, table: string, columns: string): Constraint {
  return { name, definition: `CREATE INDEX ${name} ON ${table} (${columns})` };
}

/** Non-unique indexes: not part of the rule, but they follow the statements that use them. */
const INDEXES: Array<{ before: Constraint[]; after: Constraint[] }> = [
  // creditedByRate reads (company, invoice); also serves the foreign key onto invoices.
  {
    before: [index('ix_credit_notes_invoice', 'credit_notes', 'invoice_id')],
    after: [index('ix_credit_notes_company_invoice', 'credit_notes', 'company_id, invoice_id')],
  },
  // Serves the foreign key onto invoices.
  {
    before: [index('ix_settlement_allocations_invoice', 'settlement_allocations', 'invoice_id')],
    after: [
      index('ix_settlement_allocations_company_invoice', 'settlement_allocations', 'company_id, invoice_id'),
    ],
  },
  // Same columns as the new unique (company_id, seq).
  {
    before: [index('ix_journal_entries_company_seq', 'journal_entries', 'company_id, seq')],
    after: [],
  },
  {
    before: [index('ix_webhook_endpoints_company_seq', 'webhook_endpoints', 'company_id, seq')],
    after: [],
  },
  // By id alone, off the hot path (docs/scaling.md): fan-out jobs queued before their payload
  // named the company, the sweeper's re-queue of a stale fan-out (its job key names only the
  // event) and the delivery backlog figure (same keys). Replaces uq_events_company_id's index.
  { before: [], after: [index('ix_events_id', 'events', 'id')] },
  // Delivery jobs queued before their payload named the company (retries run up to a day later).
  { before: [], after: [index('ix_webhook_deliveries_id', 'webhook_deliveries', 'id')] },
];

/**
 * The deferred balance check of InitialSchema1764500000000, verbatim but for its two reads: by id
 * (as there, restored by down()) or by (company_id, id). An entry and its lines share the company
 * (fk_journal_lines_entry), so NEW.company_id names both.
 */
function balanceCheck(byCompany: boolean): string {
  const company = byCompany ? 'company_id = NEW.company_id AND ' : '';
  return `
      CREATE OR REPLACE FUNCTION assert_journal_entry_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
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
        SELECT line_count INTO expected_lines FROM journal_entries WHERE ${company}id = target;
        SELECT count(*), coalesce(sum(debit), 0), coalesce(sum(credit), 0)
          INTO lines_count, debits, credits
          FROM journal_lines WHERE ${company}entry_id = target;
        IF lines_count <> expected_lines OR debits <> credits THEN
          RAISE EXCEPTION 'journal entry % is unbalanced or incomplete (% of % lines, debit %, credit %)',
            target, lines_count, expected_lines, debits, credits
            USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
      END $$`;
}
