import type { DataSource } from 'typeorm';

/** What plain-SQL helpers need from node-postgres: `Pool`, `PoolClient` and `Client` all fit. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * A connection for SQL run outside the request's transaction (maintenance jobs, metrics): a
 * node-postgres pool or client (what graphile-worker hands its tasks), or a TypeORM DataSource.
 * Every statement runs on its own, in autocommit.
 */
export type SqlClient = PgQueryable | DataSource;

/**
 * Runs one statement and returns its rows. The statement must be SELECT-shaped (a `WITH …
 * DELETE … RETURNING` wrapped in a final SELECT counts): for other commands TypeORM returns
 * `[rows, rowCount]` instead of the rows.
 */
export async function queryRows<TRow>(
  client: SqlClient,
  text: string,
  values: unknown[] = [],
): Promise<TRow[]> {
  if (isDataSource(client)) return client.query<TRow[]>(text, values);
  return (await client.query(text, values)).rows as TRow[];
}

function isDataSource(client: SqlClient): client is DataSource {
  return typeof (client as Partial<DataSource>).createQueryRunner === 'function';
}
