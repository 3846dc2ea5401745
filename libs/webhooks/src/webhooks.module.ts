import { type DynamicModule, Module } from '@nestjs/common';
import { OutboxModule } from '@ledgerkey/outbox';
import { CreateWebhookEndpointHandler } from './create-webhook-endpoint/create-webhook-endpoint.handler';
import { WebhookAttemptsRepository } from './deliveries/webhook-attempts.repository';
import { WebhookDeliveriesRepository } from './deliveries/webhook-deliveries.repository';
import { DeliverWebhookHandler } from './deliver-webhook/deliver-webhook.handler';
import { DisableWebhookEndpointHandler } from './disable-webhook-endpoint/disable-webhook-endpoint.handler';
import { WebhookEndpointQueries } from './endpoints/webhook-endpoint-queries';
import { WebhookEndpointsRepository } from './endpoints/webhook-endpoints.repository';
import { FanOutEventHandler } from './fan-out-event/fan-out-event.handler';
import { SweepWebhookLeasesHandler } from './sweep-webhook-leases/sweep-webhook-leases.handler';
import { WEBHOOK_OPTIONS, type WebhookOptions } from './webhook-options';

const HANDLERS = [
  CreateWebhookEndpointHandler,
  DisableWebhookEndpointHandler,
  WebhookEndpointQueries,
  FanOutEventHandler,
  DeliverWebhookHandler,
  SweepWebhookLeasesHandler,
];

/**
 * Webhook endpoints (API side) and delivery (worker side). Global, like the database: the API's
 * controllers and the job runner (in the API process or the standalone worker) share one instance.
 */
@Module({})
export class WebhooksModule {
  static forRoot(options: WebhookOptions): DynamicModule {
    return {
      module: WebhooksModule,
      global: true,
      imports: [OutboxModule],
      providers: [
        { provide: WEBHOOK_OPTIONS, useValue: options },
        WebhookEndpointsRepository,
        WebhookDeliveriesRepository,
        WebhookAttemptsRepository,
        ...HANDLERS,
      ],
      exports: HANDLERS,
    };
  }
}
