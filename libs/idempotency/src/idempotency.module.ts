import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { TransactionHost, type TypeOrmTransactionalAdapter } from '@ledgerkey/database';
import { DataSource } from 'typeorm';
import { autocommitSql, clsTransactionalSql, clsTransactionRunner } from './cls-transactions';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import {
  IDEMPOTENCY_OBSERVER,
  NO_OP_IDEMPOTENCY_OBSERVER,
  type IdempotencyObserver,
} from './idempotency.observer';
import { IDEMPOTENCY_OPTIONS, type IdempotencyModuleOptions } from './idempotency.options';
import { IdempotencyProtocol, IdempotentExecutor, UnkeyedExecutor } from './idempotency-protocol';
import { IdempotencyRecordRepository } from './idempotency-record.repository';

type ClsTransactionHost = TransactionHost<TypeOrmTransactionalAdapter>;

/**
 * Wires the framework-free protocol to Nest: nestjs-cls transactions, the SQL record store, and
 * the interceptor behind `@Idempotent`. `IdempotentExecutor` is injectable for callers without
 * HTTP (the operator CLI).
 */
@Module({})
export class IdempotencyModule {
  static forRootAsync(options: {
    imports?: DynamicModule['imports'];
    inject?: Array<string | symbol | Function>;
    useFactory: (...deps: never[]) => IdempotencyModuleOptions;
  }): DynamicModule {
    const optionsProvider: Provider = {
      provide: IDEMPOTENCY_OPTIONS,
      inject: options.inject ?? [],
      useFactory: options.useFactory,
    };
    const observerProvider: Provider = {
      provide: IDEMPOTENCY_OBSERVER,
      inject: [IDEMPOTENCY_OPTIONS],
      useFactory: (resolved: IdempotencyModuleOptions) => resolved.observer ?? NO_OP_IDEMPOTENCY_OBSERVER,
    };
    const executorProvider: Provider = {
      provide: IdempotentExecutor,
      inject: [IDEMPOTENCY_OPTIONS, IDEMPOTENCY_OBSERVER, TransactionHost, DataSource],
      useFactory: (
        resolved: IdempotencyModuleOptions,
        observer: IdempotencyObserver,
        txHost: ClsTransactionHost,
        dataSource: DataSource,
      ): IdempotentExecutor => {
        const transactions = clsTransactionRunner(txHost);
        if (resolved.benchmarkBypass === true) return new UnkeyedExecutor(transactions);
        return new IdempotencyProtocol({
          ttlSeconds: resolved.ttlSeconds,
          transactions,
          records: new IdempotencyRecordRepository(clsTransactionalSql(txHost), autocommitSql(dataSource)),
          classifier: resolved.classifier,
          clock: resolved.clock,
          sealer: resolved.sealer,
          observer,
        });
      },
    };
    return {
      module: IdempotencyModule,
      global: true,
      imports: options.imports ?? [],
      providers: [optionsProvider, observerProvider, executorProvider, IdempotencyInterceptor],
      exports: [IDEMPOTENCY_OPTIONS, IDEMPOTENCY_OBSERVER, IdempotentExecutor, IdempotencyInterceptor],
    };
  }
}
