import { Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import {
  CreateAssetDto,
  CreateAssetHandler,
  FixedAssetListView,
  FixedAssetQueries,
  FixedAssetView,
} from '@ledgerkey/assets';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ReadRoutes } from '../read-routes';

@ApiTags('Fixed assets')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/assets')
export class AssetsController extends ReadRoutes({
  view: FixedAssetView,
  listView: FixedAssetListView,
  get: {
    operationId: 'getAsset',
    summary: 'Retrieve a fixed asset, with its depreciation so far',
    notFound: "`not_found` (also for another company's id)",
  },
  list: { operationId: 'listAssets', summary: 'List fixed assets in the order they were created' },
}) {
  constructor(
    private readonly createAsset: CreateAssetHandler,
    protected override readonly queries: FixedAssetQueries,
  ) {
    super();
  }

  @Post('create')
  @HttpCode(201)
  @Idempotent({
    operation: 'assets.create',
    body: CreateAssetDto,
    status: 201,
    location: (asset: FixedAssetView) => `/v1/assets/${asset.id}`,
  })
  @ApiOperation({
    operationId: 'createAsset',
    summary: 'Record a fixed asset, depreciated straight-line',
    description:
      'Straight line over `usefulLifeMonths` from `startMonth`: every month depreciates ' +
      '⌊(cost − residualValue) / usefulLifeMonths⌋ and the last month the rounding remainder, so the ' +
      'months add up to exactly cost − residualValue. Whole months only: the start month counts in ' +
      'full, whatever day the asset was acquired. Amounts in the company currency. Creating posts ' +
      'nothing (record the acquisition as a purchase invoice); `POST /v1/depreciation-runs/create` ' +
      'posts its months. Retry with the same Idempotency-Key and body as often as needed.',
  })
  @ApiCreatedResponse({ type: FixedAssetView, description: 'Created (or replayed)' })
  @ApiConflictResponse({ description: '`idempotency_key_in_use`' })
  @ApiUnprocessableEntityResponse({
    description:
      '`asset_period_closed` (startMonth not after the last depreciated period) or `idempotency_key_reused`',
  })
  create(@IdempotentBody() dto: CreateAssetDto, @CurrentCompany() company: Company): Promise<FixedAssetView> {
    return this.createAsset.execute(company, dto);
  }
}
