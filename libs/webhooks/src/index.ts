export { WebhooksModule } from './webhooks.module';
export type { WebhookOptions } from './webhook-options';
export { parseWebhookConfig } from './webhook-config';
export { CreateWebhookEndpointHandler } from './create-webhook-endpoint/create-webhook-endpoint.handler';
export { CreateWebhookEndpointDto, ALL_EVENTS } from './create-webhook-endpoint/create-webhook-endpoint.dto';
export { DisableWebhookEndpointHandler } from './disable-webhook-endpoint/disable-webhook-endpoint.handler';
export { WebhookEndpointQueries } from './endpoints/webhook-endpoint-queries';
export {
  CreatedWebhookEndpointView,
  WebhookEndpointListView,
  WebhookEndpointView,
} from './endpoints/webhook-endpoint.view';
export { WebhookAttemptListView, WebhookAttemptView } from './deliveries/webhook-attempt.view';
export type { SweepResult } from './deliveries/webhook-deliveries.repository';
export { FanOutEventHandler } from './fan-out-event/fan-out-event.handler';
export { DeliverWebhookHandler } from './deliver-webhook/deliver-webhook.handler';
export type { DeliveryRun } from './deliver-webhook/deliver-webhook.handler';
export { SweepWebhookLeasesHandler } from './sweep-webhook-leases/sweep-webhook-leases.handler';
export { maxAttemptsOf, retryDelayMs } from './deliver-webhook/retry-schedule';
export {
  countDeliveryAttempts,
  DELIVERY_ATTEMPT_RESULTS,
  readDeliveryBacklog,
} from './deliveries/delivery-statistics';
export type { DeliveryAttemptResult, DeliveryBacklog } from './deliveries/delivery-statistics';
export { WebhookEndpointNotFoundError, WebhookUrlForbiddenError } from './webhooks.errors';
