import { type DynamicModule, Logger, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { JobsModule } from '@ledgerkey/jobs';
import { OutboxModule } from '@ledgerkey/outbox';
import { CreateWebhookEndpointHandler } from './create-webhook-endpoint/create-webhook-endpoint.handler';
import { WebhookAttemptsRepository } from './deliveries/webhook-attempts.repository';
import { WebhookDeliveriesRepository } from './deliveries/webhook-deliveries.repository';
import { DeliverWebhookHandler } from './deliver-webhook/deliver-webhook.handler';
import { WebhookDispatcher } from './dispatch-deliveries/webhook-dispatcher';
import { DisableWebhookEndpointHandler } from './disable-webhook-endpoint/disable-webhook-endpoint.handler';
import { WebhookEndpointQueries } from './endpoints/webhook-endpoint-queries';
import { WebhookEndpointsRepository } from './endpoints/webhook-endpoints.repository';
import { FanOutEventHandler } from './fan-out-event/fan-out-event.handler';
import { SealStoredSecretsHandler } from './seal-stored-secrets/seal-stored-secrets.handler';
import { SweepWebhookLeasesHandler } from './sweep-webhook-leases/sweep-webhook-leases.handler';
import { WebhookJobs } from './webhook-jobs';
import { WEBHOOK_OPTIONS, type WebhookOptions } from './webhook-options';

const HANDLERS = [
  CreateWebhookEndpointHandler,
  DisableWebhookEndpointHandler,
  WebhookEndpointQueries,
  FanOutEventHandler,
  DeliverWebhookHandler,
  SweepWebhookLeasesHandler,
  SealStoredSecretsHandler,
];

/**
 * Webhook endpoints (API side) and delivery (worker side). Global, like the database: the API's
 * controllers and the job runner (in the API process or the standalone worker) share one instance.
 * Registers its job tasks in the process's JobRegistry.
 * Needs SecretsModule (global). At boot, after migrations, brings stored secrets under the
 * current key (SealStoredSecretsHandler).
 */
@Module({})
export class WebhooksModule implements OnApplicationBootstrap {
  private readonly logger = new Logger('WebhooksModule');

  constructor(private readonly sealStoredSecrets: SealStoredSecretsHandler) {}

  /** Every process (API, worker, CLI) runs the pass: idempotent, and cheap when nothing is left. */
  async onApplicationBootstrap(): Promise<void> {
    const result = await this.sealStoredSecrets.execute();
    if (result.sealed + result.resealed > 0) {
      this.logger.log(
        `sealed ${result.sealed} plaintext webhook secrets, re-sealed ${result.resealed} under the current key`,
      );
    }
    if (result.unreadable > 0) {
      this.logger.error(
        `${result.unreadable} webhook secrets are sealed under a key this process does not have: their ` +
          `deliveries fail until SECRETS_KEY (or SECRETS_KEY_PREVIOUS) holds that key, or the endpoints are replaced`,
      );
    }
  }

  static forRoot(options: WebhookOptions): DynamicModule {
    return {
      module: WebhooksModule,
      global: true,
      imports: [OutboxModule, JobsModule],
      providers: [
        { provide: WEBHOOK_OPTIONS, useValue: options },
        // Registers the dispatcher, the lease sweep and the previous version's tasks with the
        // process's job runner.
        WebhookJobs,
        WebhookDispatcher,
        WebhookEndpointsRepository,
        WebhookDeliveriesRepository,
        WebhookAttemptsRepository,
        ...HANDLERS,
      ],
      exports: HANDLERS,
    };
  }
}
