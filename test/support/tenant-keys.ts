/** Something that runs a query: a pool, or one client (e.g. inside a transaction). */
export interface Queryable {
  query<Row extends object>(sql: string, values?: unknown[]): Promise<{ rows: Row[] }>;
}

/**
 * Tenant tables with a company_id that are deliberately not distributed by it, by name, each with
 * its reason. Citus replicates a reference table to every node; its keys need not start with
 * company_id, but its foreign keys may only reach other reference tables (never a distributed one).
 */
export const REFERENCE_TABLES: ReadonlyMap<string, string> = new Map([
  [
    'public.api_keys',
    'authentication finds a key by key_hash before the company is known, so key_hash is unique ' +
      'across companies; small (a key per company) and rarely written: a reference table, like companies',
  ],
]);

/**
 * A tenant table: a table with a `company_id` column outside the system schemas and
 * `graphile_worker` (the job queue's own schema: graphile-worker's tables, not ours, and not
 * distributed; docs/scaling.md), other than `companies` itself. Read from the catalog, so a table
 * added by any later migration is included without a list to update.
 */
export const TENANT_TABLES = `
  SELECT c.oid, format('%I.%I', n.nspname, c.relname) AS name
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'company_id' AND NOT a.attisdropped
   WHERE c.relkind IN ('r', 'p')
     AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'graphile_worker')
     AND n.nspname NOT LIKE 'pg\\_%'
     AND NOT (n.nspname = 'public' AND c.relname = 'companies')`;

export interface Offender {
  table: string;
  kind: 'no primary key' | 'primary key' | 'unique' | 'foreign key';
  name: string;
  definition: string;
}

/**
 * Every key of a tenant table that does not start with company_id: primary keys, unique
 * indexes and constraints (partial and expression ones too), and foreign keys, which must start
 * with company_id on both sides when they join two tenant tables, and on the referencing side
 * when they reach `companies`. A foreign key to a table without company_id (a reference table,
 * e.g. a currency list) is allowed: Citus accepts distributed → reference keys. Reference tables
 * (REFERENCE_TABLES) are reported like any other: callers decide.
 */
export async function tenantKeyOffenders(db: Queryable): Promise<Offender[]> {
  const { rows } = await db.query<Offender>(
    `WITH tenant AS (${TENANT_TABLES}),
     keys AS (
       -- Unique indexes cover primary keys, unique constraints and bare unique indexes
       -- (partial and expression ones too: indkey[0] = 0 for an expression).
       SELECT t.name AS "table",
              CASE WHEN i.indisprimary THEN 'primary key' ELSE 'unique' END AS kind,
              ic.relname AS name,
              pg_get_indexdef(i.indexrelid) AS definition,
              coalesce((SELECT attname FROM pg_attribute
                         WHERE attrelid = i.indrelid AND attnum = i.indkey[0]) = 'company_id', false) AS ok
         FROM tenant t
         JOIN pg_index i ON i.indrelid = t.oid AND i.indisunique
         JOIN pg_class ic ON ic.oid = i.indexrelid
       UNION ALL
       SELECT t.name, 'foreign key', con.conname, pg_get_constraintdef(con.oid),
              CASE
                -- to another tenant table: both sides start with company_id (one shard)
                WHEN EXISTS (SELECT 1 FROM tenant r WHERE r.oid = con.confrelid) THEN
                  (SELECT attname FROM pg_attribute
                    WHERE attrelid = con.conrelid AND attnum = con.conkey[1]) = 'company_id'
                  AND (SELECT attname FROM pg_attribute
                        WHERE attrelid = con.confrelid AND attnum = con.confkey[1]) = 'company_id'
                -- to companies (a reference table, or distributed by id): from company_id
                WHEN con.confrelid = 'public.companies'::regclass THEN
                  (SELECT attname FROM pg_attribute
                    WHERE attrelid = con.conrelid AND attnum = con.conkey[1]) = 'company_id'
                -- to a reference table (no company_id): allowed as it is
                ELSE true
              END
         FROM tenant t
         JOIN pg_constraint con ON con.conrelid = t.oid AND con.contype = 'f'
       UNION ALL
       SELECT t.name, 'no primary key', '', '', false
         FROM tenant t
        WHERE NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = t.oid AND i.indisprimary)
     )
     SELECT "table", kind, name, definition FROM keys WHERE NOT ok
      ORDER BY "table", kind, name`,
  );
  return rows;
}

/** One line per offender, for an assertion that prints what is wrong. */
export function offenderReport(offenders: readonly Offender[]): string {
  return offenders.map((o) => `${o.table}: ${o.kind} ${o.name} ${o.definition}`.trimEnd()).join('\n');
}
