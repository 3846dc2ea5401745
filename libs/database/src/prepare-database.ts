import type { Logger } from '@nestjs/common';
import { Client } from 'pg';
import type { DatabaseConfig } from './database-config';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded-postgres';
import {
  type Migration,
  openMigrationDataSource,
  pendingMigrations,
  runMigrations,
} from './schema-migrations';

export interface DatabaseHandle {
  url: string;
  /** The embedded server this process started (no DATABASE_URL); stopped last at shutdown. */
  embedded: EmbeddedPostgresHandle | undefined;
}

/** What a process installs into the database at boot. */
export interface DatabaseSchema {
  migrations: Migration[];
  /** Installed after the migrations, given the database URL: schemas of libraries (the job queue). */
  afterMigrations?: ReadonlyArray<(url: string) => Promise<void>>;
}

/**
 * Makes the database ready: DATABASE_URL if set, else the embedded server under DATA_DIR; then
 * `installSchema`.
 */
export async function prepareDatabase(
  config: Pick<DatabaseConfig, 'url' | 'dataDir'>,
  schema: DatabaseSchema,
  logger: SchemaLogger,
): Promise<DatabaseHandle> {
  let embedded: EmbeddedPostgresHandle | undefined;
  let url = config.url;
  if (url === undefined) {
    logger.log(`DATABASE_URL not set: using embedded PostgreSQL under ${config.dataDir}/`);
    embedded = await startEmbeddedPostgres({
      dataDir: config.dataDir,
      database: 'ledgerkey',
      log: (message) => logger.debug(message),
    });
    url = embedded.url;
  }
  await installSchema(url, schema, logger);
  return { url, embedded };
}

type SchemaLogger = Pick<Logger, 'log' | 'debug'>;

/**
 * Applies pending migrations (under an advisory lock: several processes may boot at once), then
 * each `afterMigrations` step in order. A database whose migrations are all applied is found so
 * with one read, without loading TypeORM.
 */
export async function installSchema(
  url: string,
  schema: DatabaseSchema,
  logger: SchemaLogger,
): Promise<void> {
  if ((await pendingOn(url, schema.migrations)).length > 0) {
    const dataSource = await openMigrationDataSource({
      url,
      poolSize: 2,
      applicationName: 'ledgerkey-migrate',
      migrations: schema.migrations,
    });
    try {
      const applied = await runMigrations(dataSource);
      if (applied.length > 0) logger.log(`applied migrations: ${applied.join(', ')}`);
    } finally {
      await dataSource.destroy();
    }
  }
  for (const step of schema.afterMigrations ?? []) await step(url);
}

async function pendingOn(url: string, migrations: Migration[]): Promise<string[]> {
  const client = new Client({ connectionString: url, application_name: 'ledgerkey-migrate' });
  await client.connect();
  try {
    return await pendingMigrations(
      async <Row>(text: string) => (await client.query(text)).rows as Row[],
      migrations,
    );
  } finally {
    await client.end();
  }
}
