import { Client } from 'pg';
import type { MigrationInterface } from 'typeorm';
// Direct file imports: the global setup runs outside Jest's module mapper (no @ledgerkey aliases).
import { createDataSource, quoteIdentifier, runMigrations } from '../../libs/database/src';
import { installJobQueue } from '../../libs/outbox/src/job-queue';
import { MIGRATIONS } from '../../migrations';

export interface MigratedDatabaseOptions {
  /** Applied in order; default: all of them (a migration test passes the ones before its own). */
  migrations?: Array<new () => MigrationInterface>;
  /** Install the job queue's schema (default true). */
  jobQueue?: boolean;
}

/**
 * Creates database `name` on the server of `adminUrl`, applies the migrations and installs the
 * job queue: by default the schema exactly as production has it.
 * @returns the new database's URL
 */
export async function createMigratedDatabase(
  adminUrl: string,
  name: string,
  { migrations = MIGRATIONS, jobQueue = true }: MigratedDatabaseOptions = {},
): Promise<string> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;

  const dataSource = await createDataSource({
    url: url.toString(),
    poolSize: 2,
    applicationName: 'ledgerkey-test-setup',
    migrations,
  }).initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();
  if (jobQueue) await installJobQueue(url.toString());
  return url.toString();
}

/** Drops database `name` on the server of `adminUrl`, closing its connections. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
  await admin.end();
}
