import { availableParallelism } from 'node:os';
import type { MigrationInterface } from 'typeorm';

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

/** How every connection of the process is opened: the request pool's and a migration run's. */
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
