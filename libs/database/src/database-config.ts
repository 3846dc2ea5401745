import { type Env, EnvReader, type ParsedConfig } from '@ledgerkey/process';
import { DEFAULT_PREPARED_STATEMENTS } from './database-options';

/** Where a process's database is and how long a statement may run. */
export interface DatabaseConfig {
  /** DATABASE_URL; undefined → the embedded PostgreSQL under `dataDir` (only the API runs it). */
  url: string | undefined;
  /** DATA_DIR: the embedded server's folder (also where the secrets key file lives). */
  dataDir: string;
  /** DATABASE_STATEMENT_TIMEOUT_MS: longest a statement (a lock wait included) may run before it is canceled. */
  statementTimeoutMs: number;
  /** DATABASE_PREPARED_STATEMENTS: distinct statements a connection keeps prepared; 0 = none. */
  preparedStatements: number;
}

export function parseDatabaseConfig(env: Env): ParsedConfig<DatabaseConfig> {
  const reader = new EnvReader(env);
  const url = reader.optional('DATABASE_URL');
  if (url !== undefined && !/^postgres(ql)?:\/\//.test(url)) {
    reader.problem('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  return reader.parsed({
    url,
    dataDir: reader.optional('DATA_DIR') ?? '.data',
    statementTimeoutMs: reader.integer('DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
    preparedStatements: reader.integer(
      'DATABASE_PREPARED_STATEMENTS',
      DEFAULT_PREPARED_STATEMENTS,
      0,
      10_000,
    ),
  });
}
