import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiGoneResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import {
  ApiKeyGuard,
  ApiKeyListView,
  ApiKeyQueries,
  ApiKeyView,
  type Company,
  CreateApiKeyDto,
  CreateApiKeyHandler,
  CreatedApiKeyView,
  CurrentCompany,
  RevokeApiKeyHandler,
} from '@ledgerkey/tenancy';
import { ListQueryDto } from '../list-query.dto';
import { ResourceIdPipe } from '../resource-id.pipe';
import { CREATE_API_KEY_OPERATION } from './create-api-key.operation';

const READ_ONLY_REFUSED = '`forbidden`: the request was made with a `read_only` key';

@ApiTags('API keys')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/api-keys')
export class ApiKeysController {
  constructor(
    private readonly createApiKey: CreateApiKeyHandler,
    private readonly revokeApiKey: RevokeApiKeyHandler,
    private readonly queries: ApiKeyQueries,
  ) {}

  @Post('create')
  @HttpCode(201)
  @Idempotent(CREATE_API_KEY_OPERATION)
  @ApiOperation({
    operationId: 'createApiKey',
    summary: 'Create an API key of your company',
    description:
      'A company may have several keys, e.g. one per integration and a `read_only` one for people ' +
      'who only browse. Only the key’s SHA-256 hash is stored. The key (`secret`) is in this ' +
      'response only — and in its idempotent replay: a retry with the same Idempotency-Key and ' +
      'body answers the same key again (the first answer may have been lost on its way back, and ' +
      'without it the key would be of no use). That answer is stored with the Idempotency-Key ' +
      'sealed (encrypted with the server’s SECRETS_KEY) until the key expires (IDEMPOTENCY_KEY_TTL). ' +
      'Lists never show it.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyView, description: 'Created (or replayed)' })
  @ApiForbiddenResponse({ description: READ_ONLY_REFUSED })
  @ApiGoneResponse({
    description:
      'Replays only, `idempotency_replay_unavailable`: the key was created, but the stored answer ' +
      '(it holds the key) was sealed under a key the server no longer has. Do not retry: revoke ' +
      'the key (list the keys to find it) and create another.',
  })
  create(
    @IdempotentBody() dto: CreateApiKeyDto,
    @CurrentCompany() company: Company,
  ): Promise<CreatedApiKeyView> {
    return this.createApiKey.execute(company.id, dto);
  }

  @Get()
  @ApiOperation({
    operationId: 'listApiKeys',
    summary: 'API keys in creation order, revoked ones included',
  })
  @ApiOkResponse({ type: ApiKeyListView, description: 'Never includes a key itself, only its prefix' })
  list(@Query() query: ListQueryDto, @CurrentCompany() company: Company): Promise<ApiKeyListView> {
    return this.queries.list(company.id, query.page());
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getApiKey', summary: 'Retrieve an API key (never the key itself)' })
  @ApiOkResponse({ type: ApiKeyView })
  @ApiNotFoundResponse({ description: "`not_found` (also for another company's id)" })
  get(@Param('id', ResourceIdPipe) id: string, @CurrentCompany() company: Company): Promise<ApiKeyView> {
    return this.queries.get(company.id, id);
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key',
    description:
      'Every API process refuses the key (`401`) within 5 s. Idempotent: revoking a revoked key ' +
      'answers it as it is. A key may revoke itself. The company’s last active `read_write` key ' +
      'cannot be revoked (`409 last_read_write_key`): without one, no key could be created through ' +
      'the API again — create the replacement first.',
  })
  @ApiOkResponse({ type: ApiKeyView })
  @ApiForbiddenResponse({ description: READ_ONLY_REFUSED })
  @ApiNotFoundResponse({ description: "`not_found` (also for another company's id)" })
  @ApiConflictResponse({ description: '`last_read_write_key`: the company’s last active read_write key' })
  revoke(@Param('id', ResourceIdPipe) id: string, @CurrentCompany() company: Company): Promise<ApiKeyView> {
    return this.revokeApiKey.execute(company.id, id);
  }
}
