import type { DataSource } from 'typeorm';
import { connectionSettings, type DatabaseOptions } from './database-options';

/**
 * The one DataSource factory: every migration run builds TypeORM's connection here (`poolSize`
 * connections). Schema changes come only from reviewed migrations; `synchronize` stays off.
 * TypeORM is for migrations only, and loaded here, on demand: a process whose schema is current,
 * and every test's application, never loads it.
 */
export async function createDataSource(options: DatabaseOptions): Promise<DataSource> {
  const typeorm = await import('typeorm');
  return new typeorm.DataSource({
    type: 'postgres',
    url: options.url,
    applicationName: options.applicationName,
    synchronize: false,
    migrationsRun: false,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    migrations: options.migrations,
    entities: [],
    extra: { max: options.poolSize, ...connectionSettings(options) },
  });
}

/** Arbitrary constant naming the "migrations in progress" advisory lock. */
const MIGRATION_LOCK_ID = 7_314_501_226;

/**
 * Applies pending migrations. Several processes may boot at once against one database;
 * a session-level advisory lock makes them take turns instead of racing on DDL.
 * @returns names of the migrations this call applied
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await runner.release();
  }
}
