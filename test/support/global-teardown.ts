import './register-lib-paths';
import { rmSync } from 'node:fs';
import type { EmbeddedPostgresHandle } from '@ledgerkey/database';
import { dropDatabase } from './migrated-database';
import { testDatabaseState } from './test-database';

export default async function globalTeardown(): Promise<void> {
  const state = testDatabaseState();
  await dropDatabase(state.adminUrl, state.name);
  const embedded = (globalThis as { __embeddedPostgres?: EmbeddedPostgresHandle }).__embeddedPostgres;
  if (embedded) await embedded.stop();
  if (state.dataDir) rmSync(state.dataDir, { recursive: true, force: true });
}
