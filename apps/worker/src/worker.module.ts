import { type DynamicModule, Module } from '@nestjs/common';
import { DatabaseModule, transactionalPlugin } from '@ledgerkey/database';
import { WebhooksModule } from '@ledgerkey/webhooks';
import { ClsModule } from 'nestjs-cls';
import { MIGRATIONS } from '../../../migrations';
import type { AppConfig } from '../../api/src/config';
import type { DatabaseHandle } from '../../api/src/database-bootstrap';
import { JobRunnerModule } from './job-runner.module';
import { webhookOptionsOf } from './worker-config';

/** The standalone worker: database, transactions, webhook delivery and the job runner; no HTTP. */
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
          applicationName: 'ledgerkey-worker',
          migrations: MIGRATIONS,
        }),
        WebhooksModule.forRoot(webhookOptionsOf(config)),
        JobRunnerModule,
      ],
    };
  }
}
