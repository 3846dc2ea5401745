import { Client } from 'pg';
import type { MigrationInterface } from 'typeorm';
import { createDataSource, quoteIdentifier, runMigrations } from '../../libs/database/src';
import { installJobQueue } from '../../libs/outbox/src/job-queue';
import { MIGRATIONS } from '../../migrations';
import { testDatabaseState } from './test-database';

export interface IsolatedDatabase {
  url: string;
  drop(): Promise<void>;
}

export interface IsolatedDatabaseOptions {
  /** Applied in order; default: all of them (a migration test passes the ones before its own). */
  migrations?: Array<new () => MigrationInterface>;
  /** Install the job queue's schema (default true). */
  jobQueue?: boolean;
}

/**
 * A fresh migrated database (with the job queue) of its own, on the test server. For suites
 * whose worker processes must not see, or be seen by, the job-queue workers of other suites
 * running at the same time (crash tests count every attempt), and for migration tests.
 */
export async function createIsolatedDatabase(
  label: string,
  { migrations = MIGRATIONS, jobQueue = true }: IsolatedDatabaseOptions = {},
): Promise<IsolatedDatabase> {
  const state = testDatabaseState();
  const name = `${state.name}_${label}`;
  const admin = new Client({ connectionString: state.adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
  await admin.end();
  const url = new URL(state.adminUrl);
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
  return {
    url: url.toString(),
    async drop() {
      const client = new Client({ connectionString: state.adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
      await client.end();
    },
  };
}
