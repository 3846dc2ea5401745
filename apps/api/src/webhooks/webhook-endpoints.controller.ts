import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiGoneResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import {
  CreatedWebhookEndpointView,
  CreateWebhookEndpointDto,
  CreateWebhookEndpointHandler,
  DisableWebhookEndpointHandler,
  WebhookAttemptListView,
  WebhookEndpointListView,
  WebhookEndpointQueries,
  WebhookEndpointView,
} from '@ledgerkey/webhooks';
import { ListQueryDto } from '../list-query.dto';
import { ResourceIdPipe } from '../resource-id.pipe';

@ApiTags('Webhook endpoints')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/webhook-endpoints')
export class WebhookEndpointsController {
  constructor(
    private readonly createEndpoint: CreateWebhookEndpointHandler,
    private readonly disableEndpoint: DisableWebhookEndpointHandler,
    private readonly queries: WebhookEndpointQueries,
  ) {}

  @Post('create')
  @HttpCode(201)
  @Idempotent({
    operation: 'webhook-endpoints.create',
    body: CreateWebhookEndpointDto,
    status: 201,
    location: (endpoint: CreatedWebhookEndpointView) => `/v1/webhook-endpoints/${endpoint.id}`,
    // The answer carries the signing secret: stored through the response sealer.
    sensitiveResponse: true,
  })
  @ApiOperation({
    operationId: 'createWebhookEndpoint',
    summary: 'Register a webhook endpoint',
    description:
      'Events of the subscribed types are POSTed to `url`, signed per Standard Webhooks ' +
      '(`webhook-id` = event id, stable across retries; `webhook-timestamp`; `webhook-signature`), ' +
      'at least once: deduplicate by `webhook-id`. Any 2xx acknowledges; anything else, a timeout ' +
      'or a redirect is retried per WEBHOOK_RETRY_SCHEDULE with jitter, then the delivery fails. ' +
      'The signing `secret` is in this response only — and in its idempotent replay, which is ' +
      'stored with the Idempotency-Key, sealed (encrypted with the server’s SECRETS_KEY), until the ' +
      'key expires (IDEMPOTENCY_KEY_TTL).',
  })
  @ApiCreatedResponse({ type: CreatedWebhookEndpointView, description: 'Registered (or replayed)' })
  @ApiGoneResponse({
    description:
      'Replays only, `idempotency_replay_unavailable`: the endpoint was registered, but the stored ' +
      'answer (it holds the secret) was sealed under a key the server no longer has. Do not retry: ' +
      'list the endpoints to find it, and replace it to get a new secret.',
  })
  @ApiUnprocessableEntityResponse({
    description:
      '`webhook_url_forbidden` (with `errors` on `url`): the host is, or resolves to, a loopback, ' +
      'private, link-local, CGNAT, multicast or otherwise non-public address. Stored and replayed ' +
      'under the key. Or `idempotency_key_reused`.',
  })
  create(
    @IdempotentBody() dto: CreateWebhookEndpointDto,
    @CurrentCompany() company: Company,
  ): Promise<CreatedWebhookEndpointView> {
    return this.createEndpoint.execute(company.id, dto);
  }

  @Get()
  @ApiOperation({ operationId: 'listWebhookEndpoints', summary: 'Webhook endpoints in creation order' })
  @ApiOkResponse({ type: WebhookEndpointListView, description: 'Never includes secrets' })
  list(@Query() query: ListQueryDto, @CurrentCompany() company: Company): Promise<WebhookEndpointListView> {
    return this.queries.list(company.id, query.page());
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getWebhookEndpoint', summary: 'Retrieve a webhook endpoint' })
  @ApiOkResponse({ type: WebhookEndpointView })
  @ApiNotFoundResponse({ description: "`not_found` (also for another company's id)" })
  get(
    @Param('id', ResourceIdPipe) id: string,
    @CurrentCompany() company: Company,
  ): Promise<WebhookEndpointView> {
    return this.queries.get(company.id, id);
  }

  @Post(':id/disable')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'disableWebhookEndpoint',
    summary: 'Disable a webhook endpoint',
    description:
      'No new deliveries; pending retries are canceled (an attempt already in flight completes). ' +
      'Idempotent: disabling again answers the same endpoint.',
  })
  @ApiOkResponse({ type: WebhookEndpointView })
  @ApiNotFoundResponse({ description: "`not_found` (also for another company's id)" })
  disable(
    @Param('id', ResourceIdPipe) id: string,
    @CurrentCompany() company: Company,
  ): Promise<WebhookEndpointView> {
    return this.disableEndpoint.execute(company.id, id);
  }

  @Get(':id/attempts')
  @ApiOperation({
    operationId: 'listWebhookAttempts',
    summary: 'Every delivery attempt to an endpoint, in the order they were recorded',
  })
  @ApiOkResponse({ type: WebhookAttemptListView })
  @ApiNotFoundResponse({ description: "`not_found` (also for another company's id)" })
  attempts(
    @Param('id', ResourceIdPipe) id: string,
    @Query() query: ListQueryDto,
    @CurrentCompany() company: Company,
  ): Promise<WebhookAttemptListView> {
    return this.queries.listAttempts(company.id, id, query.page());
  }
}
