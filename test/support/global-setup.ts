import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  createDataSource,
  quoteIdentifier,
  runMigrations,
  startEmbeddedPostgres,
} from '../../libs/database/src';
// Direct file import: globalSetup runs outside Jest's module mapper, so no @ledgerkey aliases here.
import { installJobQueue } from '../../libs/outbox/src/job-queue';
import { MIGRATIONS } from '../../migrations';
import { TEST_DATABASE_ENV, type TestDatabaseState } from './test-database';

/**
 * One fresh, migrated database per test run: on the server named by DATABASE_URL when set
 * (CI also runs the suite against the machine's PostgreSQL), else on an embedded server in a
 * temporary folder. Tests isolate themselves further by using a fresh company each.
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
  const admin = new Client({ connectionString: state.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
  await admin.end();
  const url = new URL(state.adminUrl);
  url.pathname = `/${name}`;
  state.url = url.toString();

  const dataSource = await createDataSource({
    url: state.url,
    poolSize: 2,
    applicationName: 'ledgerkey-test-setup',
    migrations: MIGRATIONS,
  }).initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();
  await installJobQueue(state.url);
  process.env[TEST_DATABASE_ENV] = JSON.stringify(state);
}
