import { DeferredWrites, TransactionHost, type PgTransactionalAdapter, type Sql } from '@ledgerkey/database';
import type { TransactionRunner } from './idempotency-ports';
import { IdempotencyRecordRepository, type TransactionalSql } from './idempotency-record.repository';

type ClsTransactionHost = TransactionHost<PgTransactionalAdapter>;

/**
 * The protocol's transactions as nestjs-cls transactions, so the operation's repositories
 * (`@Transactional()`, `TransactionHost`) join them. Each batches its last writes: the
 * operation's journal entry and event and the key's record go as one statement, with the COMMIT.
 */
export function clsTransactionRunner(txHost: ClsTransactionHost): TransactionRunner {
  const writes = new DeferredWrites(txHost);
  return {
    run: (work) => {
      if (txHost.isTransactionActive()) {
        throw new Error('the idempotency protocol opens its own transactions: do not call it inside one');
      }
      // Its own transaction, committed as soon as the work returns: the batch carries the COMMIT.
      return txHost.withTransaction(() => writes.withBatch(work, { commit: true }));
    },
  };
}

/** The record store's SQL, on the current nestjs-cls transaction only (Propagation.Mandatory). */
export function clsTransactionalSql(txHost: ClsTransactionHost): TransactionalSql {
  const writes = new DeferredWrites(txHost);
  const assertTransaction = (): void => {
    if (!txHost.isTransactionActive()) {
      throw new Error('idempotency records are read and written inside a transaction only');
    }
  };
  return {
    query: <TRow>(text: string, values: unknown[]) => {
      assertTransaction();
      return txHost.tx.query<TRow>(text, values);
    },
    write: (write) => {
      assertTransaction();
      return writes.write(write);
    },
  };
}

/**
 * The protocol's ports as the module wires them: nestjs-cls transactions, and the SQL record store
 * on them, its reads that need no transaction (findFinished, findStalled) on the pool.
 */
export function clsProtocolPorts(
  txHost: ClsTransactionHost,
  pool: Sql,
): { transactions: TransactionRunner; records: IdempotencyRecordRepository } {
  return {
    transactions: clsTransactionRunner(txHost),
    records: new IdempotencyRecordRepository(clsTransactionalSql(txHost), pool),
  };
}
