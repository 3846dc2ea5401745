import { Pool, type PoolClient, type QueryResult } from 'pg';
import { closing } from './close-pool';
import { connectionSettings, type DatabaseOptions, DEFAULT_PREPARED_STATEMENTS } from './database-options';
import { isStalePlan } from './postgres-errors';
import { QueryFailedError } from './query-failed-error';

/** SQL on the current transaction (`TransactionHost.tx`), or outside one on the pool, in autocommit. */
export interface Sql {
  /**
   * Runs one statement and returns its rows (none for a command without RETURNING).
   * @throws QueryFailedError (the driver's error as `driverError`, its fields copied) when it fails
   */
  query<Row = Record<string, unknown>>(text: string, values?: unknown[]): Promise<Row[]>;
}

/**
 * Names for parameterized statements, sent as pg named prepared statements (`{ name, text, values }`)
 * so PostgreSQL parses and plans each once per connection: the server's CPU per create fell by a
 * quarter on PostgreSQL 15 (docs/performance.md). One per pool. At most `limit` texts get a name
 * (the server keeps each for a connection's lifetime); the rest, all when `limit` is 0 (a pooler
 * that cannot keep prepared statements), and fixed text run unnamed.
 */
export class StatementNames {
  readonly #names = new Map<string, string>();
  #issued = 0;

  constructor(private readonly limit: number) {}

  nameOf(text: string): string | undefined {
    const known = this.#names.get(text);
    if (known !== undefined || this.#names.size >= this.limit) return known;
    return this.#issue(text);
  }

  /**
   * A prepared statement's result columns are fixed: after DDL that changes them its next run
   * fails with 0A000 (`isStalePlan`, transient: the request answers 503). The text gets a new
   * name, so its retry prepares it afresh (pg keeps no public way to forget a parsed name).
   */
  renew(text: string): void {
    if (this.#names.has(text)) this.#issue(text);
  }

  #issue(text: string): string {
    const name = `lk_${(this.#issued += 1)}`;
    this.#names.set(text, name);
    return name;
  }
}

/** Runs one statement on a pool or a checked-out connection, named when `names` names it. */
export async function runStatement(
  on: Pool | PoolClient,
  names: StatementNames,
  text: string,
  values: unknown[] = [],
): Promise<QueryResult> {
  const name = values.length > 0 ? names.nameOf(text) : undefined;
  try {
    return await on.query(name === undefined ? { text, values } : { name, text, values });
  } catch (error) {
    if (name !== undefined && isStalePlan(error)) names.renew(text);
    throw new QueryFailedError(text, values, error as Error);
  }
}

/**
 * The request path's pool, in pg's pipeline mode (a statement is written without waiting for the
 * answer to the one before: `PgTransaction`). As `Sql`, each statement runs in autocommit.
 */
export class DatabasePool implements Sql {
  readonly names: StatementNames;
  readonly #pool: Pool;
  readonly #closing: { close(): Promise<void> };

  constructor(options: Omit<DatabaseOptions, 'migrations'>) {
    this.names = new StatementNames(options.preparedStatements ?? DEFAULT_PREPARED_STATEMENTS);
    this.#pool = new Pool({
      connectionString: options.url,
      max: options.poolSize,
      ...connectionSettings(options),
      pipeline: true,
    });
    // An idle connection that fails (a database restart) is dropped; unheard, it would end the process.
    this.#pool.on('error', () => undefined);
    this.#closing = closing(this.#pool);
  }

  async query<Row = Record<string, unknown>>(text: string, values?: unknown[]): Promise<Row[]> {
    return (await runStatement(this.#pool, this.names, text, values)).rows as Row[];
  }

  connect(): Promise<PoolClient> {
    return this.#pool.connect();
  }

  /** Closes every connection, resolving once they are closed (once; later calls wait for the first). */
  end(): Promise<void> {
    return this.#closing.close();
  }
}
