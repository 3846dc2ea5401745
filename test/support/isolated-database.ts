import { Pool } from 'pg';
import { createMigratedDatabase, dropDatabase, type MigratedDatabaseOptions } from './migrated-database';
import { testDatabaseState } from './test-database';

export interface IsolatedDatabase {
  url: string;
  drop(): Promise<void>;
}

export type IsolatedDatabaseOptions = MigratedDatabaseOptions;

/**
 * A fresh migrated database (with the job queue) of its own, on the test server. For suites
 * whose worker processes must not see, or be seen by, the job-queue workers of other suites
 * running at the same time (crash tests count every attempt), and for migration tests.
 */
export async function createIsolatedDatabase(
  label: string,
  options: IsolatedDatabaseOptions = {},
): Promise<IsolatedDatabase> {
  const state = testDatabaseState();
  const name = `${state.name}_${label}`;
  const url = await createMigratedDatabase(state.adminUrl, name, options);
  return { url, drop: () => dropDatabase(state.adminUrl, name) };
}

/**
 * A direct connection to an isolated database, for setting up and asserting on its rows. Its
 * `drop()` (WITH FORCE) terminates any connection still closing (57P01); the pool re-emits that
 * as an event, which without a listener fails whichever test runs at the time (seen on CI). A
 * query still rejects on its own errors.
 */
export function isolatedDatabasePool(database: IsolatedDatabase, max: number): Pool {
  const pool = new Pool({ connectionString: database.url, max });
  pool.on('error', () => undefined);
  return pool;
}
