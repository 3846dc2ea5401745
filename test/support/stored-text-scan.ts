import type { Pool } from 'pg';

/**
 * Every column of every user table whose stored text contains any of `needles`, as
 * `schema.table.column`. Reads text, character, json(b), array and bytea columns: a secret that
 * must not be at rest in clear is looked for everywhere, not only where we expect it.
 */
export async function columnsContaining(db: Pool, needles: string[]): Promise<string[]> {
  const { rows: columns } = await db.query<{ schema: string; table: string; column: string; type: string }>(
    `SELECT c.table_schema AS schema, c.table_name AS table, c.column_name AS column, c.data_type AS type
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE t.table_type = 'BASE TABLE'
        AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
        AND c.data_type IN ('text', 'character varying', 'character', 'json', 'jsonb', 'ARRAY', 'bytea')`,
  );
  const scanned = columns.map((column) => `${column.table}.${column.column}`);
  if (!scanned.includes('idempotency_records.response_body')) {
    throw new Error('the scan must cover stored replay bodies');
  }
  const found: string[] = [];
  const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;
  for (const { schema, table, column, type } of columns) {
    const text = type === 'bytea' ? `encode(${quote(column)}, 'escape')` : `${quote(column)}::text`;
    const matches = needles.map((_, index) => `strpos(${text}, $${index + 1}) > 0`).join(' OR ');
    const { rows } = await db.query<{ hits: number }>(
      `SELECT count(*)::int AS hits FROM ${quote(schema)}.${quote(table)} WHERE ${matches}`,
      needles,
    );
    if (rows[0].hits > 0) found.push(`${schema}.${table}.${column}`);
  }
  return found;
}
