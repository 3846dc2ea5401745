import { Injectable } from '@nestjs/common';
import type { PageRequest } from '@ledgerkey/database';
import type { WebhookAttemptListView } from '../deliveries/webhook-attempt.view';
import { WebhookAttemptsRepository } from '../deliveries/webhook-attempts.repository';
import { WebhookEndpointNotFoundError } from '../webhooks.errors';
import type { WebhookEndpointListView, WebhookEndpointView } from './webhook-endpoint.view';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';

/** Read side of webhook endpoints and their attempts, always within one company. Never shows a secret. */
@Injectable()
export class WebhookEndpointQueries {
  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly attempts: WebhookAttemptsRepository,
  ) {}

  /** @throws WebhookEndpointNotFoundError when the id is unknown in this company */
  async get(companyId: string, endpointId: string): Promise<WebhookEndpointView> {
    const endpoint = await this.endpoints.findById(companyId, endpointId);
    if (!endpoint) throw new WebhookEndpointNotFoundError(endpointId);
    return endpoint;
  }

  async list(companyId: string, page: PageRequest): Promise<WebhookEndpointListView> {
    return { object: 'list', ...(await this.endpoints.list(companyId, page)) };
  }

  /** @throws WebhookEndpointNotFoundError when the endpoint is unknown in this company */
  async listAttempts(
    companyId: string,
    endpointId: string,
    page: PageRequest,
  ): Promise<WebhookAttemptListView> {
    await this.get(companyId, endpointId);
    return { object: 'list', ...(await this.attempts.listByEndpoint(companyId, endpointId, page)) };
  }
}
