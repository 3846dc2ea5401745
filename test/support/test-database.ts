import { Pool } from 'pg';

export const TEST_DATABASE_ENV = 'LEDGERKEY_TEST_DATABASE';

export interface TestDatabaseState {
  name: string;
  /** The server's maintenance URL (creates and drops the test database). */
  adminUrl: string;
  /** The migrated test database. */
  url: string;
  /** Set when the run started its own embedded server. */
  dataDir: string | undefined;
}

export function testDatabaseState(): TestDatabaseState {
  const raw = process.env[TEST_DATABASE_ENV];
  if (!raw) throw new Error('the e2e global setup did not run');
  return JSON.parse(raw) as TestDatabaseState;
}

export function testDatabaseUrl(): string {
  return testDatabaseState().url;
}

/** A direct connection for assertions on stored rows (and for trying to break invariants). */
export function testDatabasePool(): Pool {
  return new Pool({ connectionString: testDatabaseUrl(), max: 4 });
}
