import { createMigratedDatabase, dropDatabase } from './migrated-database';
import { testDatabaseState } from './test-database';

export interface IsolatedDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A fresh migrated database (with the job queue) of its own, on the test server. For suites
 * whose worker processes must not see, or be seen by, the job-queue workers of other suites
 * running at the same time (crash tests count every attempt).
 */
export async function createIsolatedDatabase(label: string): Promise<IsolatedDatabase> {
  const state = testDatabaseState();
  const name = `${state.name}_${label}`;
  const url = await createMigratedDatabase(state.adminUrl, name);
  return { url, drop: () => dropDatabase(state.adminUrl, name) };
}
