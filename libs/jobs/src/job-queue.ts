import { runMigrations } from 'graphile-worker';

/**
 * Installs or upgrades the job queue's own schema (`graphile_worker`). Run at boot, after our
 * migrations: documents enqueue jobs in their own transaction, so the schema must exist before
 * the first request.
 */
export async function installJobQueue(connectionString: string): Promise<void> {
  await runMigrations({ connectionString, logger: undefined });
}
