import { Query, type QueryResult } from 'pg';
// pg's own value conversion for Bind (dates, buffers, arrays), as its Query uses it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/** The statement name under which a connection keeps `START TRANSACTION` prepared (a suffix after a loss). */
export const BEGIN_STATEMENT = 'lk_begin';

/** What pg's `Connection` offers a query while it writes its messages (not in @types/pg). */
interface WireConnection {
  bind(config: { statement: string; values?: unknown[]; valueMapper?: (value: unknown) => unknown }): void;
  parse(config: { text: string; name?: string }): void;
  submittedNamedStatements: Record<string, string>;
  execute(config: { portal?: string; rows?: number }): void;
  sync(): void;
}

/** What goes with a pipelined statement. */
export interface PipelinedBoundaries {
  /** In front: the name of the connection's prepared `START TRANSACTION`, if it goes. */
  beginStatement?: string;
  /** In front, after `START TRANSACTION`: a statement prepared on the connection, its rows dropped. */
  lead?: { name: string; values: unknown[]; statement: LeadingStatement };
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
  handleDataRow(message: unknown): void;
  handleError(error: Error, connection: WireConnection): void;
}

/** Where a leading statement is: not sent yet, ran, failed, or dropped with its transaction. */
export type LeadState = 'waiting' | 'done' | 'failed' | 'dropped';

/**
 * A statement that goes out in front of its transaction's next statement, in the same round trip
 * (`PipeliningClient.lead`). Nobody awaits it: its state is read once the statement it went with
 * has answered. A failure skips everything behind it (that statement answers the same error) and
 * leaves the transaction aborted.
 */
export class LeadingStatement {
  #state: LeadState = 'waiting';
  #error: Error | undefined;

  get state(): LeadState {
    return this.#state;
  }

  /** Its error, once it failed. */
  get error(): Error | undefined {
    return this.#error;
  }

  /** It ran (no error) or failed; set once, by whatever sent it. */
  settle(error?: Error): void {
    if (this.#state !== 'waiting') return;
    this.#state = error === undefined ? 'done' : 'failed';
    this.#error = error;
  }

  /** Its transaction ended before it was sent. */
  drop(): void {
    if (this.#state === 'waiting') this.#state = 'dropped';
  }
}

/**
 * One prepared statement sent with its transaction's `START TRANSACTION` and/or a lead (a statement
 * nobody awaits, `LeadingStatement`) in front and/or `COMMIT` behind it, as one pipeline with one
 * Sync: one round trip instead of up to four. What a client sees is the statement's own result. One Sync means one implicit unit of execution: the server
 * skips everything after an error until the Sync, so a failed `START TRANSACTION` never lets the
 * statement run outside a transaction, and a failed statement never reaches `COMMIT` (its
 * transaction stays aborted, for the caller's `ROLLBACK`). A failing `COMMIT` (a deferred
 * constraint) is the query's error, with the transaction already rolled back by the server.
 *
 * `START TRANSACTION` and the lead are sent as statements the connection holds prepared (Bind and
 * Execute only; a lead's first use parses it on its own, `ParseOnlyQuery`): a Parse of either
 * would answer a ParseComplete that pg would credit to this query's statement name before that
 * statement's own Parse had been checked (and a failed lead skips that Parse). `COMMIT` comes
 * after the statement, so its unnamed Parse is sent each time.
 */
export class PipelinedQuery extends Query {
  /** Command completions still to come from `START TRANSACTION` and the lead before the statement's own. */
  #leading: number;
  #statementDone = false;

  constructor(
    config: { name: string; text: string; values: unknown[] },
    private readonly boundaries: PipelinedBoundaries,
  ) {
    super(config);
    this.#leading =
      (boundaries.beginStatement === undefined ? 0 : 1) + (boundaries.lead === undefined ? 0 : 1);
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

  /** pg's Parse (if needed), Bind, Describe and Execute of the statement, after `START TRANSACTION` and the lead. */
  prepare(connection: WireConnection): void {
    if (this.boundaries.beginStatement !== undefined) {
      connection.bind({ statement: this.boundaries.beginStatement });
      connection.execute({});
    }
    const { lead } = this.boundaries;
    if (lead !== undefined) {
      // No Describe: the server sends its rows without a description, and they are dropped.
      connection.bind({ statement: lead.name, values: lead.values, valueMapper: prepareValue });
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

  /** The lead's rows are not the statement's. */
  handleDataRow(message: unknown): void {
    if (this.#leading === 0) queryPrototype.handleDataRow.call(this, message);
  }

  /** Only the statement's completion is its result; the boundaries' are not. */
  handleCommandComplete(message: unknown, connection: WireConnection): void {
    if (this.#leading > 0) {
      this.#leading -= 1;
      // START TRANSACTION completes first: the last leading completion is the lead's.
      if (this.#leading === 0) this.boundaries.lead?.statement.settle();
      return;
    }
    if (this.#statementDone) return;
    this.#statementDone = true;
    queryPrototype.handleCommandComplete.call(this, message, connection);
  }

  /**
   * An error before the lead completed is the lead's (or START TRANSACTION's, which kept it from
   * running): it is settled before the statement's caller hears of the error.
   */
  handleError(error: Error, connection: WireConnection): void {
    this.boundaries.lead?.statement.settle(error);
    queryPrototype.handleError.call(this, error, connection);
  }
}

/**
 * A Parse alone, for a statement that will go out as a lead (Bind and Execute only): one round trip
 * once per connection, in its queue's order, before the lead that needs it.
 */
export class ParseOnlyQuery extends Query {
  constructor(private readonly statement: { name: string; text: string }) {
    super(statement);
    // Nobody waits for it: a failed Parse shows as the lead's failure (26000, no such statement).
    (this as unknown as QueryInternals).callback = () => undefined;
  }

  prepare(connection: WireConnection): void {
    connection.parse({ text: this.statement.text, name: this.statement.name });
    connection.submittedNamedStatements[this.statement.name] = this.statement.text;
    connection.sync();
  }
}

const queryPrototype = Query.prototype as unknown as QueryInternals;

/** What `client.query` answers for a boundary the client answered itself (as pg's Result would). */
export function boundaryResult(command: 'BEGIN' | 'COMMIT' | 'ROLLBACK'): QueryResult {
  return { command, rowCount: null, oid: 0, rows: [], fields: [] };
}
