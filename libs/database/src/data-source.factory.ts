import { availableParallelism } from 'node:os';
import { DataSource, type MigrationInterface } from 'typeorm';

export interface DatabaseOptions {
  url: string;
  /** Connections in this process's request pool (`DatabasePool`). */
  poolSize: number;
  /** Shown in pg_stat_activity, so operators can tell api, worker and cli apart. */
  applicationName: string;
  /**
   * `statement_timeout` of every connection, lock waits included (default 30 s): a request never
   * waits forever on a lock, it fails with SQLSTATE 57014 and its transaction rolls back.
   */
  statementTimeoutMs?: number;
  /**
   * Distinct parameterized statements the request pool names (`StatementNames`), so the server
   * parses and plans them once per connection (default 200; 0 sends every statement unnamed, e.g.
   * behind a pooler that cannot keep prepared statements).
   */
  preparedStatements?: number;
  migrations: Array<new () => MigrationInterface>;
  /** Runs after the pool is closed at shutdown, e.g. to stop an embedded server. */
  afterClose?: () => Promise<void>;
}

const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

/**
 * The request path's pool when DATABASE_POOL_SIZE is not set: twice the machine's cores, at
 * least 4. More connections than PostgreSQL has cores to run them only add waiting backends: on
 * 2 cores, 4 connections instead of 10 cut PostgreSQL's CPU per create by about 30 %, and
 * single-series creates (one counter row, so one lock) ran about 40 % faster (docs/decisions/0038-database-pool-size.md).
 * A database on a bigger machine than the API's wants DATABASE_POOL_SIZE set.
 */
export function defaultPoolSize(cores = availableParallelism()): number {
  return Math.max(4, 2 * cores);
}
export const DEFAULT_PREPARED_STATEMENTS = 200;

/** How every connection of the process is opened, in either pool (`DatabasePool`, the DataSource). */
export function connectionSettings(options: Pick<DatabaseOptions, 'applicationName' | 'statementTimeoutMs'>) {
  return {
    application_name: options.applicationName,
    connectionTimeoutMillis: 10_000,
    // A request never waits forever on a lock: a busy key answers 409 at once, and anything else
    // that waits past the timeout is canceled (57014), which the API answers with 503 + Retry-After.
    statement_timeout: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    idle_in_transaction_session_timeout: 60_000,
  };
}

/**
 * The one DataSource factory: the API, the CLI and the migration runner all build TypeORM's
 * connection here, for migrations and schema checks (`poolSize` connections; in an application,
 * beside its `DatabasePool`, a small one). Schema changes come only from reviewed migrations;
 * `synchronize` stays off everywhere.
 */
export function createDataSource(options: DatabaseOptions): DataSource {
  return new DataSource({
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

/** True when every known migration has been applied (readiness). */
export async function migrationsUpToDate(dataSource: DataSource): Promise<boolean> {
  return !(await dataSource.showMigrations());
}
