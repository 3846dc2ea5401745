import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { DataSource } from 'typeorm';
import { createDataSource, type DatabaseOptions } from './data-source.factory';
import { DeferredWrites } from './deferred-writes';
import { PgTransactionalAdapter } from './pg-transactions';
import { DatabasePool } from './sql';

const DATABASE_OPTIONS = Symbol('DATABASE_OPTIONS');

/** TypeORM's DataSource is for migrations (one connection for their lock, one to run) and readiness. */
const DATA_SOURCE_POOL_SIZE = 2;

/**
 * Provides the request path's `DatabasePool` and the initialised DataSource to the whole
 * application and closes both on shutdown, after Nest has stopped taking requests; then runs
 * `afterClose` (the embedded server stops last).
 */
@Global()
@Module({})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    private readonly pool: DatabasePool,
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(DATABASE_OPTIONS) private readonly options: DatabaseOptions,
  ) {}

  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        { provide: DATABASE_OPTIONS, useValue: options },
        { provide: DatabasePool, useFactory: () => new DatabasePool(options) },
        {
          provide: DataSource,
          useFactory: async () =>
            createDataSource({ ...options, poolSize: DATA_SOURCE_POOL_SIZE }).initialize(),
        },
        DeferredWrites,
      ],
      exports: [DatabasePool, DataSource, DeferredWrites],
    };
  }

  /** Closes both pools. */
  async close(): Promise<void> {
    await this.pool.end();
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.close();
    await this.options.afterClose?.();
  }
}

/**
 * The CLS plugin that lets `@Transactional()` and `TransactionHost` propagate one
 * transaction through every repository a use case touches.
 */
export function transactionalPlugin(): ClsPluginTransactional {
  // No imports: DatabaseModule is global, so the adapter finds the DatabasePool anywhere.
  return new ClsPluginTransactional({ adapter: new PgTransactionalAdapter() });
}
