import { Injectable } from '@nestjs/common';
import type { WebhookEndpointView } from '../endpoints/webhook-endpoint.view';
import { WebhookEndpointsRepository } from '../endpoints/webhook-endpoints.repository';
import { WebhookEndpointNotFoundError } from '../webhooks.errors';

@Injectable()
export class DisableWebhookEndpointHandler {
  constructor(private readonly endpoints: WebhookEndpointsRepository) {}

  /**
   * Stops deliveries to an endpoint: no new ones are created, pending ones are canceled when
   * their turn comes (an attempt already running finishes). Idempotent.
   * @throws WebhookEndpointNotFoundError when the id is unknown in this company
   */
  async execute(companyId: string, endpointId: string): Promise<WebhookEndpointView> {
    const endpoint = await this.endpoints.disable(companyId, endpointId);
    if (!endpoint) throw new WebhookEndpointNotFoundError(endpointId);
    return endpoint;
  }
}
