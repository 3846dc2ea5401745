import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { BindParameter } from './keyset-page';
import { PgTransaction, type PgTransactionalAdapter, type Statement } from './pg-transactions';

/**
 * One write whose answer nobody reads (a journal entry, an event, an idempotency record), as the
 * common table expressions of one statement, so that several of them can travel as one statement.
 */
export interface DeferredWrite {
  /**
   * What it writes: at most one write of a kind waits in a batch (two upserts of one counter row
   * in one statement would not see each other), so a second one sends the batch first.
   */
  kind: string;
  /**
   * The CTEs, in order, as `[local name, SQL]`. `bind` adds a parameter and answers its
   * placeholder; `name` gives a CTE its name in the combined statement (use it for every
   * reference to a CTE of this write). Data-modifying CTEs always run.
   */
  ctes(bind: BindParameter, name: (local: string) => string): Array<[local: string, sql: string]>;
  /** CTEs that are plain SELECTs run for their effect (a function call): they run only when read. */
  reads?: string[];
  /** The error its caller should see for a failure of this write (e.g. a named unique violation). */
  errorOf?(error: unknown): Error | undefined;
}

/** The writes waiting in each open batch, by transaction. */
const batches = new WeakMap<object, DeferredWrite[]>();

/**
 * Round trips for writes nobody reads back. `write` sends its writes as one statement, now — or,
 * inside `withBatch`, with every other deferred write of the transaction in one statement, in the
 * round trip of whatever the transaction sends next: its next statement (so nothing in the
 * transaction can read past a deferred write) or, once the batch's work has returned, its COMMIT.
 * Each write in a statement is a round trip saved; from a document's number to COMMIT (the counter
 * row's lock) that is the single-series throughput.
 */
@Injectable()
export class DeferredWrites {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /** Sends `writes` as one statement, or adds them to the transaction's open batch. */
  async write(...writes: DeferredWrite[]): Promise<void> {
    const batch = this.txHost.isTransactionActive() ? batches.get(this.txHost.tx) : undefined;
    if (batch === undefined) return this.send(writes);
    for (const write of writes) {
      if (batch.some((waiting) => waiting.kind === write.kind)) await this.send(batch.splice(0));
      batch.push(write);
    }
  }

  /**
   * Runs `work` in the current transaction with a batch open, then sends what is still deferred;
   * the caller commits after this resolves. With `commit`, the batch goes with the transaction's
   * COMMIT (one round trip less, and from a document's number to the commit, one wait for the
   * event loop less): only for the caller that commits as soon as this resolves — the
   * transaction refuses any statement after it.
   * @throws Error when no transaction is active, or one already has a batch open
   * @throws the failing write's own error (`errorOf`) when the batch fails; then nothing commits
   */
  async withBatch<T>(work: () => Promise<T>, options: { commit?: boolean } = {}): Promise<T> {
    if (!this.txHost.isTransactionActive()) throw new Error('a batch of writes needs a transaction');
    const tx = this.txHost.tx;
    if (!(tx instanceof PgTransaction)) throw new Error('a batch of writes needs a PgTransaction');
    if (batches.has(tx)) throw new Error('this transaction already has a batch of writes open');
    const batch: DeferredWrite[] = [];
    batches.set(tx, batch);
    const stop = tx.sendBeforeNext(() => statementOf(batch.splice(0)));
    try {
      const result = await work();
      // What still waits goes with the COMMIT, or as a statement of its own.
      if (options.commit === true) await tx.commit();
      else await this.send(batch.splice(0));
      return result;
    } finally {
      stop();
      batches.delete(tx);
    }
  }

  private async send(writes: DeferredWrite[]): Promise<void> {
    const statement = statementOf(writes);
    if (statement === undefined) return;
    try {
      await this.txHost.tx.query(statement.text, statement.values);
    } catch (error) {
      throw statement.errorOf?.(error) ?? error;
    }
  }
}

/** The writes as one statement, failing with the first error one of them names; none: undefined. */
function statementOf(writes: DeferredWrite[]): Statement | undefined {
  if (writes.length === 0) return undefined;
  return {
    ...combinedStatement(writes),
    errorOf: (error) => writes.map((write) => write.errorOf?.(error)).find((known) => known !== undefined),
  };
}

/** `WITH <every write's CTEs> SELECT <the reads>`: one statement, one round trip. */
function combinedStatement(writes: DeferredWrite[]): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const bind: BindParameter = (value) => `$${values.push(value)}`;
  const ctes: string[] = [];
  const reads: string[] = [];
  writes.forEach((write, index) => {
    const name = (local: string): string => `w${index}_${local}`;
    for (const [local, sql] of write.ctes(bind, name)) ctes.push(`${name(local)} AS (${sql})`);
    for (const local of write.reads ?? []) reads.push(`(SELECT count(*) FROM ${name(local)})`);
  });
  const read = reads.length === 0 ? '0' : reads.join(' + ');
  return { text: `WITH ${ctes.join(',\n')}\nSELECT ${read} AS reads`, values };
}
