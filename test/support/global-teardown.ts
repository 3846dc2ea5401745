import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { quoteIdentifier, type EmbeddedPostgresHandle } from '../../libs/database/src';
import { testDatabaseState } from './test-database';

export default async function globalTeardown(): Promise<void> {
  const state = testDatabaseState();
  const admin = new Client({ connectionString: state.adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(state.name)} WITH (FORCE)`);
  await admin.end();
  const embedded = (globalThis as { __embeddedPostgres?: EmbeddedPostgresHandle }).__embeddedPostgres;
  if (embedded) await embedded.stop();
  if (state.dataDir) rmSync(state.dataDir, { recursive: true, force: true });
}
