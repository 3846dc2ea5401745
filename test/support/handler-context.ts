import type { INestApplicationContext, ModuleMetadata, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DatabaseModule,
  TransactionHost,
  transactionalPlugin,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import { ClsModule } from 'nestjs-cls';
import type { Pool } from 'pg';
import { MIGRATIONS } from '../../migrations';
import { testDatabasePool, testDatabaseUrl } from './test-database';

export interface HandlerContext {
  /** The Nest context: `get()` the handlers, repositories and ports under test. */
  app: INestApplicationContext;
  /** The nestjs-cls transaction host the use cases' repositories run on. */
  txHost: TransactionHost<PgTransactionalAdapter>;
  /** A separate pool for arranging and asserting rows, outside the code under test. */
  db: Pool;
  close(): Promise<void>;
}

/**
 * The handler tier: lib modules (`imports`) with what the application gives them — nestjs-cls
 * with the transactional plugin, the request pool on the shared migrated test database — and no
 * HTTP. One per test file: @nestjs-cls/transactional keeps a process-wide TransactionHost (see
 * test-app.ts).
 */
export async function startHandlerContext(
  imports: NonNullable<ModuleMetadata['imports']> = [],
  providers: Provider[] = [],
): Promise<HandlerContext> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ClsModule.forRoot({ global: true, plugins: [transactionalPlugin()] }),
      DatabaseModule.forRoot({
        url: testDatabaseUrl(),
        poolSize: 10,
        applicationName: 'ledgerkey-handler-test',
        migrations: MIGRATIONS,
      }),
      ...imports,
    ],
    providers,
  }).compile();
  const app = await moduleRef.init();
  const db = testDatabasePool();
  return {
    app,
    txHost: app.get<TransactionHost<PgTransactionalAdapter>>(TransactionHost),
    db,
    async close() {
      await db.end();
      await app.close();
    },
  };
}
