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
