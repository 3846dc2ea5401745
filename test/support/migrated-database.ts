import { Client } from 'pg';
import type { MigrationInterface } from 'typeorm';
import { installSchema, quoteIdentifier } from '@ledgerkey/database';
import { installJobQueue } from '@ledgerkey/jobs';
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

  await installSchema(
    url.toString(),
    { migrations, afterMigrations: jobQueue ? [installJobQueue] : [] },
    QUIET,
  );
  return url.toString();
}

const QUIET = { log: () => undefined, debug: () => undefined };

/** Drops database `name` on the server of `adminUrl`, closing its connections. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
  await admin.end();
}
