import './register-lib-paths';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '@ledgerkey/database';
import { createMigratedDatabase } from './migrated-database';
import { TEST_DATABASE_ENV, type TestDatabaseState } from './test-database';

/**
 * One fresh, migrated database per test run, shared by the e2e and handler projects (Jest runs a
 * global setup module once however many projects name it): on the server named by DATABASE_URL
 * when set (CI also runs the suite against the machine's PostgreSQL), else on an embedded server
 * in a temporary folder. Tests isolate themselves further by using a fresh company (or key
 * scope) each.
 */
export default async function globalSetup(): Promise<void> {
  const name = `ledgerkey_test_${Date.now()}_${process.pid}`;
  const state: TestDatabaseState = { name, adminUrl: '', url: '', dataDir: undefined };
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    state.adminUrl = serverUrl;
  } else {
    state.dataDir = mkdtempSync(join(tmpdir(), 'ledgerkey-test-'));
    const embedded = await startEmbeddedPostgres({ dataDir: state.dataDir, database: 'postgres' });
    (globalThis as { __embeddedPostgres?: unknown }).__embeddedPostgres = embedded;
    state.adminUrl = embedded.url;
  }
  state.url = await createMigratedDatabase(state.adminUrl, name);
  process.env[TEST_DATABASE_ENV] = JSON.stringify(state);
}
