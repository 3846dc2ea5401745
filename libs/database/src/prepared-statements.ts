import { Client, type QueryResult } from 'pg';
import {
  BEGIN_STATEMENT,
  boundaryResult,
  LeadingStatement,
  ParseOnlyQuery,
  type PipelinedBoundaries,
  PipelinedQuery,
} from './pipelined-transactions';

/** A statement waiting to go out in front of its transaction's next one. */
interface Lead {
  name: string;
  text: string;
  values: unknown[];
  statement: LeadingStatement;
}

/** pg's record of the statements a connection has prepared (not in @types/pg). */
interface ParsedStatements {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
}

/**
 * Named prepared statements per connection, so PostgreSQL parses, analyses and plans a statement
 * once per connection instead of on every call. Measured on the create path's own statements
 * (docs/performance.md): the server's CPU per create fell by a quarter on PostgreSQL 15 and by
 * about 40 % on 18 (whose plan cache also serves SQL-language functions, such as the constraints' helpers).
 *
 * Only parameterized statements are named (`query(text, values)` with at least one value, which is
 * how TypeORM and the repositories send SQL); fixed text (`COMMIT`, DDL) stays on the simple
 * protocol. A connection names at most `limit` distinct texts — the server keeps a plan for each
 * for the connection's lifetime — and sends any further text unnamed, as before.
 *
 * A prepared statement's result columns are fixed: after DDL that changes them (another instance
 * migrating during a rolling deploy), its next run fails with 0A000 "cached plan must not change
 * result type". That error counts as transient (`isTransientDatabaseFailure`, so the request answers
 * 503 with Retry-After and its transaction rolls back), and the connection forgets the name: the
 * retry prepares the statement afresh.
 *
 * The same connection saves the round trips of its transactions' boundaries (PipelinedQuery): a
 * `START TRANSACTION` is answered at once and goes out in front of the transaction's first
 * parameterized statement, in one round trip with it (any other statement gets it sent on its own
 * first; a transaction that sends nothing sends neither it nor its COMMIT). After
 * `commitWithNextStatement()` (DeferredWrites, for a transaction's last statement), the next
 * statement carries the COMMIT too. A statement nobody awaits may go in front of the next one too
 * (`lead`: the idempotency key's claim rides with the operation's first statement). On the create
 * path that is 2 round trips instead of 5, and from the invoice's number to the commit one instead
 * of two (docs/performance.md).
 */
export function preparingClient(limit: number): typeof Client {
  return class PreparingClient extends Client implements PipeliningClient {
    /** Statement text → its name on this connection. */
    readonly #names = new Map<string, string>();
    #nextName = 0;
    /** The name under which this connection holds `START TRANSACTION` prepared, once it does. */
    #beginStatement: string | undefined;
    #beginPreparations = 0;
    /** A `START TRANSACTION` answered here, to go out in front of the transaction's first statement. */
    #beginDeferred = false;
    /** `commitWithNextStatement()` was called: the next statement carries the COMMIT. */
    #commitNext = false;
    /** The transaction committed with its last statement: its COMMIT is answered here. */
    #committed = false;
    /** `lead()`: goes out in front of the transaction's next statement. */
    #lead: Lead | undefined;

    commitWithNextStatement(): void {
      this.#commitNext = true;
    }

    lead(text: string, values: unknown[]): LeadingStatement | null {
      if (this.#lead !== undefined) throw new Error('a statement already waits to lead the next one');
      if (this.#committed) throw new Error('refused a lead after its transaction committed');
      // Only in a transaction: outside one it would simply be a statement of its own.
      if (!this.#beginDeferred && this.getTransactionStatus() !== 'T') return null;
      const name = this.#nameOf(text);
      if (name === undefined) return null;
      const wire = (this as unknown as { connection: ParsedStatements }).connection;
      if (wire.parsedStatements[name] === undefined && wire.submittedNamedStatements[name] === undefined) {
        // A lead is sent without its Parse (see PipelinedQuery): the connection's first one has it
        // parsed on its own, once, ahead of it in the queue.
        super.query(new ParseOnlyQuery({ name, text }));
      }
      const statement = new LeadingStatement();
      this.#lead = { name, text, values, statement };
      return statement;
    }

    override query(...args: unknown[]): never {
      const [text, values, callback] = args;
      const commit = this.#commitNext;
      this.#commitNext = false;
      const promised = callback === undefined && typeof values !== 'function';
      if (promised && typeof text === 'string' && !isValueList(values)) {
        const answered = this.#boundary(text);
        if (answered) return answered as never;
      }
      if (this.#committed) {
        return this.#refuse(args, `"${String(text)}" after its transaction committed`);
      }
      const name =
        typeof text === 'string' && isValueList(values) && callback === undefined
          ? this.#nameOf(text)
          : undefined;
      if (name === undefined) {
        const send = () => (super.query as (...all: unknown[]) => never)(...args);
        if (!this.#beginDeferred && this.#lead === undefined) return send();
        // Not a statement that can carry the BEGIN and the lead: they go first, on their own.
        const ahead = this.#sendAhead();
        if (promised) return ahead.then(send) as never;
        ahead.then(send, (error: unknown) => callbackOf(args)?.(error as Error));
        return undefined as never;
      }
      const begin = this.#beginDeferred;
      this.#beginDeferred = false;
      const lead = this.#lead;
      this.#lead = undefined;
      const config = { name, text: text as string, values: values as unknown[] };
      const sent =
        begin || commit || lead
          ? this.#pipelined(config, {
              beginStatement: begin ? this.#beginStatement : undefined,
              lead,
              commit,
            })
          : (super.query(config) as Promise<QueryResult>);
      return sent.catch((error: unknown) => {
        if (isStalePlan(error)) this.#names.delete(text as string);
        throw error;
      }) as never;
    }

    /**
     * TypeORM's transaction boundaries, answered here when nothing needs to be sent yet: a
     * `START TRANSACTION` is deferred to the first statement; a COMMIT or ROLLBACK of a transaction
     * that sent nothing, and the COMMIT of one that committed with its last statement, are done.
     */
    #boundary(text: string): Promise<QueryResult> | undefined {
      if (text === 'START TRANSACTION') {
        // A new transaction: whatever the last one left here is over (TypeORM ended it).
        this.#committed = false;
        this.#dropLead();
        if (this.getTransactionStatus() !== 'I') return undefined;
        if (this.#beginStatement === undefined) return this.#begin().then(() => boundaryResult('BEGIN'));
        this.#beginDeferred = true;
        return Promise.resolve(boundaryResult('BEGIN'));
      }
      if (text !== 'COMMIT' && text !== 'ROLLBACK') return undefined;
      if (this.#lead !== undefined) {
        // A COMMIT needs its lead to have run first (a failed lead fails the COMMIT: the server would
        // answer it with a rollback); a ROLLBACK makes it moot.
        if (text === 'COMMIT') {
          return this.#sendAhead().then(() => super.query('COMMIT') as Promise<QueryResult>);
        }
        this.#dropLead();
      }
      if (this.#beginDeferred) {
        this.#beginDeferred = false;
        return Promise.resolve(boundaryResult(text));
      }
      if (!this.#committed) return undefined;
      this.#committed = false;
      if (text === 'COMMIT') return Promise.resolve(boundaryResult('COMMIT'));
      return Promise.reject(
        new Error('ROLLBACK after the transaction committed with its last statement: it stays committed'),
      );
    }

    /** Sends START TRANSACTION on its own, as a prepared statement (preparing it if needed). */
    async #begin(): Promise<void> {
      const name =
        this.#beginStatement ??
        (this.#beginPreparations === 0 ? BEGIN_STATEMENT : `${BEGIN_STATEMENT}_${this.#beginPreparations}`);
      await super.query({ name, text: 'START TRANSACTION' });
      if (this.#beginStatement === undefined) this.#beginPreparations += 1;
      this.#beginStatement = name;
    }

    /** What waits in front of the next statement (START TRANSACTION, the lead), sent on its own. */
    async #sendAhead(): Promise<void> {
      const begin = this.#beginDeferred;
      this.#beginDeferred = false;
      const lead = this.#lead;
      this.#lead = undefined;
      if (lead === undefined) {
        if (begin) await this.#begin();
        return;
      }
      const { name, text, values, statement } = lead;
      try {
        await this.#pipelined(
          { name, text, values },
          { beginStatement: begin ? this.#beginStatement : undefined, commit: false },
        );
      } catch (error) {
        this.#forgetIfLost(error, name);
        statement.settle(error as Error);
        throw error;
      }
      statement.settle();
    }

    #dropLead(): void {
      this.#lead?.statement.drop();
      this.#lead = undefined;
    }

    async #pipelined(
      config: { name: string; text: string; values: unknown[] },
      boundaries: PipelinedBoundaries,
    ): Promise<QueryResult> {
      const query = new PipelinedQuery(config, boundaries);
      const result = query.result();
      super.query(query);
      try {
        const answer = await result;
        if (boundaries.commit) this.#committed = true;
        return answer;
      } catch (error) {
        // 26000: the session lost its prepared START TRANSACTION (a DEALLOCATE or DISCARD): prepare it
        // again next time, under a new name (pg remembers the old one as parsed).
        if (boundaries.beginStatement !== undefined && (error as { code?: unknown }).code === '26000') {
          this.#beginStatement = undefined;
        }
        if (boundaries.lead !== undefined) this.#forgetIfLost(error, boundaries.lead.name);
        throw error;
      }
    }

    /** 26000 for a lead's statement: the session lost it; it is parsed again before the next lead. */
    #forgetIfLost(error: unknown, name: string): void {
      const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
      if (code === '26000' && typeof message === 'string' && message.includes(`"${name}"`)) {
        delete (this as unknown as { connection: ParsedStatements }).connection.parsedStatements[name];
      }
    }

    #refuse(args: unknown[], what: string): never {
      const error = new Error(`refused ${what}: only its COMMIT may follow`);
      const callback = callbackOf(args);
      if (callback) {
        process.nextTick(() => callback(error));
        return undefined as never;
      }
      return Promise.reject(error) as never;
    }

    #nameOf(text: string): string | undefined {
      const known = this.#names.get(text);
      if (known !== undefined || this.#names.size >= limit) return known;
      const name = `lk_${(this.#nextName += 1)}`;
      this.#names.set(text, name);
      return name;
    }
  };
}

/** A connection that can send its transaction's COMMIT with the next statement (`preparingClient`). */
export interface PipeliningClient {
  /**
   * The next statement goes with the transaction's COMMIT, in one round trip; the COMMIT that
   * follows it is then answered by the client. Nothing but that COMMIT may follow: any other
   * statement is refused (it would run outside the transaction), and a ROLLBACK fails loudly.
   */
  commitWithNextStatement(): void;

  /**
   * `text` with `values` goes out in front of the transaction's next statement, in its round trip
   * (or, when the next is a COMMIT or a statement without parameters, on its own just before it;
   * a ROLLBACK drops it). Nobody awaits it: its state is read once that statement answered. Its
   * rows are dropped; its error is that statement's too, which it skips. Null when it cannot lead
   * (no transaction, or the connection names no more statements): send it as usual.
   */
  lead(text: string, values: unknown[]): LeadingStatement | null;
}

export function isPipeliningClient(client: unknown): client is PipeliningClient {
  return typeof (client as Partial<PipeliningClient> | undefined)?.commitWithNextStatement === 'function';
}

/** The connection of a transaction's entity manager, when it is a `PipeliningClient`. */
export function pipeliningConnectionOf(manager: { queryRunner?: unknown }): PipeliningClient | undefined {
  const connection = (manager.queryRunner as { databaseConnection?: unknown } | undefined)
    ?.databaseConnection;
  return isPipeliningClient(connection) ? connection : undefined;
}

function callbackOf(args: unknown[]): ((error: Error) => void) | undefined {
  return args.find((arg) => typeof arg === 'function') as ((error: Error) => void) | undefined;
}

function isValueList(values: unknown): values is unknown[] {
  return Array.isArray(values) && values.length > 0;
}

/**
 * SQLSTATE 0A000 as raised for a prepared statement whose result columns changed under it. 0A000
 * alone means any unsupported feature; the server's routine (`RevalidateCachedQuery`) names this
 * one whatever the server's `lc_messages`, the English message is the fallback.
 */
export function isStalePlan(error: unknown): boolean {
  const { code, routine, message } = (error ?? {}) as {
    code?: unknown;
    routine?: unknown;
    message?: unknown;
  };
  return (
    code === '0A000' &&
    (routine === 'RevalidateCachedQuery' ||
      (typeof message === 'string' && message.includes('cached plan must not change result type')))
  );
}
