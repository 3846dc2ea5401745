import { type DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule, transactionalPlugin } from '@ledgerkey/database';
import { SecretsModule } from '@ledgerkey/secrets';
import { WebhooksModule } from '@ledgerkey/webhooks';
import { ClsModule } from 'nestjs-cls';
import { MIGRATIONS } from '../../../migrations';
import { type AppConfig, secretsOptionsOf } from '../../api/src/config';
import type { DatabaseHandle } from '../../api/src/database-bootstrap';
import { JobRunnerModule } from './job-runner.module';
import { webhookOptionsOf } from './worker-config';

/** The standalone worker: database, transactions, secrets, webhook delivery and the job runner; no HTTP. */
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
        JobRunnerModule,
      ],
    };
  }
}
