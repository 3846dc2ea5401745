import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import type { DatabaseOptions } from './database-options';
import { DeferredWrites } from './deferred-writes';
import { PgTransactionalAdapter } from './pg-transactions';
import { type Migration, pendingMigrations } from './schema-migrations';
import { DatabasePool } from './sql';

const DATABASE_OPTIONS = Symbol('DATABASE_OPTIONS');

/** Whether the database has every migration this build knows (readiness). */
export class SchemaState {
  constructor(
    private readonly pool: DatabasePool,
    private readonly migrations: Migration[],
  ) {}

  /** The names of this build's migrations the database has not applied; one read. */
  pending(): Promise<string[]> {
    return pendingMigrations(<Row>(text: string) => this.pool.query<Row>(text), this.migrations);
  }
}

/**
 * Provides the request path's `DatabasePool` and the schema's state to the whole application and
 * closes the pool on shutdown, after Nest has stopped taking requests; then runs `afterClose`
 * (the embedded server stops last). Migrations run before the application starts
 * (`installSchema`), so the application holds no TypeORM DataSource.
 */
@Global()
@Module({})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    private readonly pool: DatabasePool,
    @Inject(DATABASE_OPTIONS) private readonly options: DatabaseOptions,
  ) {}

  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: DatabaseModule,
      providers: [
        { provide: DATABASE_OPTIONS, useValue: options },
        { provide: DatabasePool, useFactory: () => new DatabasePool(options) },
        {
          provide: SchemaState,
          inject: [DatabasePool],
          useFactory: (pool: DatabasePool) => new SchemaState(pool, options.migrations),
        },
        DeferredWrites,
      ],
      exports: [DatabasePool, SchemaState, DeferredWrites],
    };
  }

  /** Closes the pool: every connection closed. */
  async close(): Promise<void> {
    await this.pool.end();
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
