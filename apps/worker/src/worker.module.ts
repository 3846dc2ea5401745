import { type DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule, transactionalPlugin } from '@ledgerkey/database';
import { IdempotencyPurgeModule } from '@ledgerkey/idempotency';
import { JobsModule } from '@ledgerkey/jobs';
import { SecretsModule } from '@ledgerkey/secrets';
import { WebhooksModule } from '@ledgerkey/webhooks';
import { ClsModule } from 'nestjs-cls';
import { MIGRATIONS } from '../../../migrations';
import { type AppConfig, secretsOptionsOf } from '../../api/src/config';
import type { DatabaseHandle } from '../../api/src/database-bootstrap';
import { webhookOptionsOf } from './worker-config';

/** The standalone worker: database, transactions, secrets, the job runner and the tasks of webhooks and idempotency; no HTTP. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig, database: DatabaseHandle): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ClsModule.forRoot({ global: true, plugins: [transactionalPlugin()] }),
        DatabaseModule.forRoot({
          url: database.url,
          poolSize: config.workerConcurrency + 2,
          statementTimeoutMs: config.databaseStatementTimeoutMs,
          applicationName: 'ledgerkey-worker',
          migrations: MIGRATIONS,
        }),
        // The same key as the API's (SECRETS_KEY, or the shared DATA_DIR): deliveries open the secrets it sealed.
        SecretsModule.forRoot(secretsOptionsOf(config)),
        WebhooksModule.forRoot(webhookOptionsOf(config)),
        JobsModule,
        IdempotencyPurgeModule,
      ],
    };
  }
}
