import {
  DeferredWrites,
  pipeliningConnectionOf,
  TransactionHost,
  type TypeOrmTransactionalAdapter,
} from '@ledgerkey/database';
import type { DataSource } from 'typeorm';
import type { TransactionRunner } from './idempotency-ports';
import type { AutocommitSql, TransactionalSql } from './idempotency-record.repository';

type ClsTransactionHost = TransactionHost<TypeOrmTransactionalAdapter>;

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
      return txHost.tx.query<TRow[]>(text, values);
    },
    write: (write) => {
      assertTransaction();
      return writes.write(write);
    },
    lead: (text, values) => {
      assertTransaction();
      return pipeliningConnectionOf(txHost.tx)?.lead(text, values) ?? null;
    },
  };
}

/** Statements that need no transaction (one indexed read), on the pool: never inside the caller's. */
export function autocommitSql(dataSource: DataSource): AutocommitSql {
  return { query: <TRow>(text: string, values: unknown[]) => dataSource.query<TRow[]>(text, values) };
}
