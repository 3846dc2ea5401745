import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DataSource } from 'typeorm';
import { createDataSource, type DatabaseOptions } from './data-source.factory';
import { DeferredWrites } from './deferred-writes';

const DATABASE_OPTIONS = Symbol('DATABASE_OPTIONS');

/**
 * Provides the initialised DataSource to the whole application and closes its pool on
 * shutdown, after Nest has stopped taking requests; then runs `afterClose` (the embedded
 * server stops last).
 */
@Global()
@Module({})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(DATABASE_OPTIONS) private readonly options: DatabaseOptions,
  ) {}

  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        { provide: DATABASE_OPTIONS, useValue: options },
        {
          provide: DataSource,
          useFactory: async () => createDataSource(options).initialize(),
        },
        DeferredWrites,
      ],
      exports: [DataSource, DeferredWrites],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
    await this.options.afterClose?.();
  }
}

/**
 * The CLS plugin that lets `@Transactional()` and `TransactionHost` propagate one
 * transaction through every repository a use case touches.
 */
export function transactionalPlugin(): ClsPluginTransactional {
  // No imports: DatabaseModule is global, so the adapter finds the DataSource anywhere.
  return new ClsPluginTransactional({
    adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: DataSource }),
  });
}
