import { Query, type QueryResult } from 'pg';

/** The statement name under which a connection keeps `START TRANSACTION` prepared (a suffix after a loss). */
export const BEGIN_STATEMENT = 'lk_begin';

/** What pg's `Connection` offers a query while it writes its messages (not in @types/pg). */
interface WireConnection {
  bind(config: { statement: string }): void;
  parse(config: { text: string }): void;
  execute(config: { portal?: string; rows?: number }): void;
  sync(): void;
}

/** What goes with a pipelined statement. */
export interface PipelinedBoundaries {
  /** In front: the name of the connection's prepared `START TRANSACTION`, if it goes. */
  beginStatement?: string;
  /** Behind: `COMMIT`. */
  commit: boolean;
}

/** pg's `Query` internals that a pipelined query extends (pg 8, lib/query.js; not in @types/pg). */
interface QueryInternals {
  portal: string;
  rows: number | undefined;
  callback: ((error: Error | null, result?: QueryResult) => void) | undefined;
  prepare(connection: WireConnection): void;
  _getRows(connection: WireConnection, rows: number | undefined): void;
  handleCommandComplete(message: unknown, connection: WireConnection): void;
}

/**
 * One prepared statement sent with its transaction's `START TRANSACTION` in front and/or `COMMIT`
 * behind it, as one pipeline with one Sync: one round trip instead of two or three. What a client
 * sees is the statement's own result. One Sync means one implicit unit of execution: the server
 * skips everything after an error until the Sync, so a failed `START TRANSACTION` never lets the
 * statement run outside a transaction, and a failed statement never reaches `COMMIT` (its
 * transaction stays aborted, for the caller's `ROLLBACK`). A failing `COMMIT` (a deferred
 * constraint) is the query's error, with the transaction already rolled back by the server.
 *
 * `START TRANSACTION` is sent as a statement the connection holds prepared (Bind and Execute
 * only): a Parse of it would answer a ParseComplete that pg would credit to this query's statement
 * name before that statement's own Parse had been checked. `COMMIT` comes after the statement, so
 * its unnamed Parse is sent each time.
 */
export class PipelinedQuery extends Query {
  /** Command completions still to come from `START TRANSACTION` before the statement's own. */
  #leading: number;
  #statementDone = false;

  constructor(
    config: { name: string; text: string; values: unknown[] },
    private readonly boundaries: PipelinedBoundaries,
  ) {
    super(config);
    this.#leading = boundaries.beginStatement === undefined ? 0 : 1;
    if ((this as unknown as QueryInternals).rows !== undefined) {
      throw new Error('a pipelined query reads all its rows at once');
    }
  }

  /** The result, as `client.query(config)` would give it (a submittable gets no promise from pg). */
  result(): Promise<QueryResult> {
    return new Promise((resolve, reject) => {
      (this as unknown as QueryInternals).callback = (error, result) =>
        error ? reject(error) : resolve(result as QueryResult);
    });
  }

  /** pg's Parse (if needed), Bind, Describe and Execute of the statement, after `START TRANSACTION`. */
  prepare(connection: WireConnection): void {
    if (this.boundaries.beginStatement !== undefined) {
      connection.bind({ statement: this.boundaries.beginStatement });
      connection.execute({});
    }
    queryPrototype.prepare.call(this, connection);
  }

  /** The statement's Execute, then `COMMIT`, then the one Sync. */
  _getRows(connection: WireConnection): void {
    connection.execute({ portal: (this as unknown as QueryInternals).portal });
    if (this.boundaries.commit) {
      connection.parse({ text: 'COMMIT' });
      connection.bind({ statement: '' });
      connection.execute({});
    }
    connection.sync();
  }

  /** Only the statement's completion is its result; the boundaries' are not. */
  handleCommandComplete(message: unknown, connection: WireConnection): void {
    if (this.#leading > 0) {
      this.#leading -= 1;
      return;
    }
    if (this.#statementDone) return;
    this.#statementDone = true;
    queryPrototype.handleCommandComplete.call(this, message, connection);
  }
}

const queryPrototype = Query.prototype as unknown as QueryInternals;

/** What `client.query` answers for a boundary the client answered itself (as pg's Result would). */
export function boundaryResult(command: 'BEGIN' | 'COMMIT' | 'ROLLBACK'): QueryResult {
  return { command, rowCount: null, oid: 0, rows: [], fields: [] };
}
