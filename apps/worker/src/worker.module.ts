import { type DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule, transactionalPlugin } from '@ledgerkey/database';
import { IdempotencyModule, IdempotencyPurgeModule } from '@ledgerkey/idempotency';
import { JobsModule } from '@ledgerkey/jobs';
import { PaymentsModule } from '@ledgerkey/payments';
import { SecretsModule } from '@ledgerkey/secrets';
import { WebhooksModule } from '@ledgerkey/webhooks';
import { ClsModule } from 'nestjs-cls';
import { MIGRATIONS } from '../../../migrations';
import type { WorkerConfig } from './config';

/**
 * The standalone worker: database, transactions, secrets, the job runner and the tasks of webhooks,
 * idempotency and payments (the recovery, with the idempotency protocol to resume); no HTTP.
 */
@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ClsModule.forRoot({ global: true, plugins: [transactionalPlugin()] }),
        DatabaseModule.forRoot({
          url: config.database.url,
          poolSize: config.jobs.concurrency + 2,
          statementTimeoutMs: config.database.statementTimeoutMs,
          preparedStatements: config.database.preparedStatements,
          applicationName: 'ledgerkey-worker',
          migrations: MIGRATIONS,
        }),
        SecretsModule.forRoot(config.secrets),
        WebhooksModule.forRoot(config.webhooks),
        JobsModule,
        IdempotencyPurgeModule,
        IdempotencyModule.forExecutor({ ttlSeconds: config.idempotency.ttlSeconds }),
        PaymentsModule.forRootAsync({ useFactory: () => ({ config: config.payments }) }),
      ],
    };
  }
}
