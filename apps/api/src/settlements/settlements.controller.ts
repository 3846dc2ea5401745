import { Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import {
  RecordSettlementDto,
  RecordSettlementHandler,
  SettlementListView,
  SettlementQueries,
  SettlementView,
} from '@ledgerkey/invoicing';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ReadRoutes } from '../read-routes';
import { SettlementListQueryDto } from './settlement-list-query.dto';

@ApiTags('Settlements')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/settlements')
export class SettlementsController extends ReadRoutes({
  view: SettlementView,
  listView: SettlementListView,
  get: {
    operationId: 'getSettlement',
    summary: 'Retrieve a settlement',
    notFound: "`not_found` (also for another company's id)",
  },
  list: {
    operationId: 'listSettlements',
    summary: 'List settlements in the order they were recorded',
    query: SettlementListQueryDto,
  },
}) {
  constructor(
    private readonly recordSettlement: RecordSettlementHandler,
    protected override readonly queries: SettlementQueries,
  ) {
    super();
  }

  @Post('create')
  @HttpCode(201)
  @Idempotent({
    operation: 'settlements.create',
    body: RecordSettlementDto,
    status: 201,
    location: (settlement: SettlementView) => `/v1/settlements/${settlement.id}`,
  })
  @ApiOperation({
    operationId: 'createSettlement',
    summary: 'Record a payout from a payment provider',
    description:
      'Allocates a provider payout to sales invoices, raises their `paidTotal` and posts one journal ' +
      'entry (debit bank allocated − fee, debit payment fees, credit receivables). One settlement per ' +
      '`payoutId`, for ever: a second one, under any Idempotency-Key or after the key expired, answers ' +
      '409 `payout_already_settled` naming the first. An allocation above the invoice outstanding ' +
      'amount (gross − credited − paid − its payments still processing) or in another currency answers 422 ' +
      '`allocation_exceeds_outstanding`; an unknown invoice 404 `not_found`. These outcomes are ' +
      'stored and replayed under the key like a success.',
  })
  @ApiCreatedResponse({ type: SettlementView, description: 'Recorded (or replayed)' })
  @ApiNotFoundResponse({ description: '`not_found`: an allocated invoice does not exist in your company' })
  @ApiConflictResponse({
    description: '`payout_already_settled` (with `existingSettlementId`) or `idempotency_key_in_use`',
  })
  @ApiUnprocessableEntityResponse({
    description:
      '`allocation_exceeds_outstanding` (above gross − credited − paid − payments still processing, or another currency), ' +
      '`amount_out_of_range` or `idempotency_key_reused`',
  })
  create(
    @IdempotentBody() dto: RecordSettlementDto,
    @CurrentCompany() company: Company,
  ): Promise<SettlementView> {
    return this.recordSettlement.execute(company, dto);
  }
}
