import type { Sql } from './sql';

/** What plain-SQL helpers need from node-postgres: `Pool`, `PoolClient` and `Client` all fit. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * A connection for SQL run outside the request's transaction (maintenance jobs, metrics): a
 * node-postgres pool or client (what graphile-worker hands its tasks), or an `Sql` that answers
 * rows (the `DatabasePool`). Every statement runs on its own, in autocommit.
 */
export type SqlClient = PgQueryable | Sql;

/**
 * Runs one statement and returns its rows. The statement must be SELECT-shaped (a `WITH …
 * DELETE … RETURNING` wrapped in a final SELECT counts).
 */
export async function queryRows<TRow>(
  client: SqlClient,
  text: string,
  values: unknown[] = [],
): Promise<TRow[]> {
  const answer = await client.query(text, values);
  // An `Sql` answers the rows, node-postgres a result holding them.
  return (Array.isArray(answer) ? answer : answer.rows) as TRow[];
}
