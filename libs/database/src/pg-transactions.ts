import type { TransactionalAdapter } from '@nestjs-cls/transactional';
import type { PoolClient, QueryResult } from 'pg';
import { DatabasePool, runStatement, type Sql, type StatementNames } from './sql';

/** A statement, and the error its caller should see for its failure (if not the driver's). */
export interface Statement {
  text: string;
  values: unknown[];
  errorOf?(error: unknown): Error | undefined;
}

/**
 * One transaction on one connection of a `DatabasePool`, in pg's pipeline mode: what is written
 * before an answer is awaited travels in one round trip. BEGIN goes with the first statement, the
 * last statement can carry the COMMIT (`commit(last)`), and what waits (`sendBeforeNext`) goes in
 * front of whatever is sent next. Each statement has its own Sync: after a failure the server
 * answers the rest with 25P02 and the COMMIT with a ROLLBACK, so the caller sees the first failure
 * in the order sent. BEGIN fails only with its session (connection lost, server shutting down),
 * and every statement behind it with it.
 */
export class PgTransaction implements Sql {
  #begin: Promise<unknown> | undefined;
  #ended: 'committed' | 'rolled back' | undefined;
  #waiting: (() => Statement | undefined) | undefined;

  constructor(
    private readonly client: PoolClient,
    private readonly names: StatementNames,
  ) {}

  /** COMMIT or ROLLBACK was sent: no more statements. */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  async query<Row = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<Row[]> {
    const results = await this.#send([...this.#takeWaiting(), { text, values }], false);
    return results[results.length - 1].rows as Row[];
  }

  /** `waiting()` answers what goes in front of the next statement or COMMIT, if anything. */
  sendBeforeNext(waiting: () => Statement | undefined): () => void {
    if (this.#waiting !== undefined) throw new Error('statements already wait to go before the next one');
    this.#waiting = waiting;
    return () => {
      this.#waiting = undefined;
    };
  }

  /**
   * Sends what waits, `last` and COMMIT in one round trip, then refuses any statement (it would run
   * outside the transaction). A transaction that sent nothing sends nothing.
   * @throws the first failure of what it sent (nothing committed), or the COMMIT's (a deferred constraint)
   */
  async commit(last?: Statement): Promise<void> {
    const statements = [...this.#takeWaiting(), ...(last === undefined ? [] : [last])];
    if (statements.length === 0 && (this.#begin === undefined || this.#ended === 'committed')) {
      this.#ended ??= 'committed';
      return;
    }
    await this.#send(statements, true);
  }

  /** Ends the transaction with ROLLBACK unless it ended already (a sent COMMIT ends it either way). */
  async rollback(): Promise<void> {
    if (this.#ended !== undefined) return;
    this.#ended = 'rolled back';
    if (this.#begin !== undefined) await runStatement(this.client, this.names, 'ROLLBACK');
  }

  async #send(statements: Statement[], commit: boolean): Promise<QueryResult[]> {
    if (this.#ended !== undefined) {
      const what = statements.length > 0 ? `"${statements[0].text.slice(0, 80)}"` : 'COMMIT';
      throw new Error(`refused ${what}: its transaction ${this.#ended} already`);
    }
    this.#begin ??= runStatement(this.client, this.names, 'BEGIN');
    if (commit) this.#ended = 'committed';
    const sent = statements.map(({ text, values }) => runStatement(this.client, this.names, text, values));
    const ending = commit ? runStatement(this.client, this.names, 'COMMIT') : undefined;
    // After a failure in front of it, only its answer (a ROLLBACK) is waited for.
    const ended = ending?.catch(() => undefined);
    const [begun, ...settled] = await Promise.allSettled([this.#begin, ...sent]);
    const failed = [begun, ...settled].findIndex((outcome) => outcome.status === 'rejected');
    if (failed >= 0) {
      const { reason } = [begun, ...settled][failed] as PromiseRejectedResult;
      await ended;
      throw (failed > 0 && statements[failed - 1].errorOf?.(reason)) || reason;
    }
    if (ending !== undefined) {
      const { command } = await ending;
      // A statement sent earlier whose failure nobody awaited rolled the transaction back.
      if (command !== 'COMMIT') throw new Error(`COMMIT was answered with ${command}: nothing committed`);
    }
    return settled.map((outcome) => (outcome as PromiseFulfilledResult<QueryResult>).value);
  }

  #takeWaiting(): Statement[] {
    return [this.#waiting?.()].filter((waiting) => waiting !== undefined);
  }
}

/** No options: every transaction is READ COMMITTED, the server's default. */
export type PgTransactionOptions = Record<never, never>;

/**
 * The nestjs-cls adapter on our `DatabasePool`: transactions are `PgTransaction`s; `TransactionHost#tx`
 * outside one is the pool. No nested transactions (savepoints): nothing uses them.
 */
export class PgTransactionalAdapter implements TransactionalAdapter<DatabasePool, Sql, PgTransactionOptions> {
  readonly connectionToken = DatabasePool;

  readonly optionsFactory = (pool: DatabasePool) => ({
    wrapWithTransaction: (
      _options: PgTransactionOptions,
      fn: () => Promise<unknown>,
      setTx: (tx?: Sql) => void,
    ): Promise<unknown> =>
      inTransaction(pool, (tx) => {
        setTx(tx);
        return fn();
      }),
    getFallbackInstance: (): Sql => pool,
  });
}

/**
 * Runs `work` in a transaction on a connection of its own: COMMIT when it resolves (unless it
 * committed), ROLLBACK when it or the COMMIT rejects (a connection whose ROLLBACK failed is dropped).
 */
export async function inTransaction<T>(
  pool: DatabasePool,
  work: (tx: PgTransaction) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  // A connection lost while checked out fails its statements, and pg-pool drops it at release;
  // unheard, its error would end the process.
  const lost = (): void => undefined;
  client.on('error', lost);
  const tx = new PgTransaction(client, pool.names);
  let unusable: Error | undefined;
  try {
    const result = await work(tx);
    if (!tx.ended) await tx.commit();
    return result;
  } catch (error) {
    unusable = await tx.rollback().then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    throw error;
  } finally {
    client.off('error', lost);
    client.release(unusable);
  }
}
