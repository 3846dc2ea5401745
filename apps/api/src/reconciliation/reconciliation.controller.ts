import { Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { type ExternalEffect, Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import {
  CREATE_RECONCILIATION_RUN_OPERATION,
  CreateReconciliationRunDto,
  ReconciliationQueries,
  ReconciliationRunView,
  RunReconciliationHandler,
  toReconciliationRange,
} from '@ledgerkey/payments';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ResourceIdPipe } from '../resource-id.pipe';

@ApiTags('Reconciliation')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/reconciliation/runs')
export class ReconciliationController {
  constructor(
    private readonly reconciliation: RunReconciliationHandler,
    private readonly queries: ReconciliationQueries,
  ) {}

  @Post('create')
  @HttpCode(201)
  @Idempotent({
    ...CREATE_RECONCILIATION_RUN_OPERATION,
    body: CreateReconciliationRunDto,
    effect: 'external',
  })
  @ApiOperation({
    operationId: 'createReconciliationRun',
    summary: "Compare the provider's charges, refunds and payouts with the local books",
    description:
      'Reads every charge (with its refunds) and payout the provider has in [from, to) and every local payment ' +
      'created in it, and reports each difference: `missing_locally`, `missing_at_provider`, `amount_mismatch`, ' +
      '`status_mismatch`. Safe cases are fixed through the paths provider events take and reported ' +
      '`auto_resolved` (a processing payment whose charge has an outcome is completed; a refund not booked is ' +
      'booked; a payout not settled is imported); the rest `needs_review`. The provider is read outside any ' +
      'transaction: while it cannot be read the answer is `202` with the run `running` (retry with the same ' +
      'key to resume it). The workers run the same on a schedule (PAYMENT_RECONCILIATION_INTERVAL_MINUTES).',
  })
  @ApiCreatedResponse({
    type: ReconciliationRunView,
    description: 'Completed (stored under the key, replayed)',
  })
  @ApiAcceptedResponse({
    type: ReconciliationRunView,
    description: 'The provider could not be read yet: `running`',
  })
  @ApiConflictResponse({ description: '`idempotency_key_in_use`' })
  @ApiUnprocessableEntityResponse({ description: '`idempotency_key_reused`' })
  @ApiServiceUnavailableResponse({ description: '`payment_provider_unavailable` (no provider configured)' })
  create(
    @IdempotentBody() dto: CreateReconciliationRunDto,
    @CurrentCompany() company: Company,
  ): ExternalEffect<unknown, unknown, ReconciliationRunView> {
    return this.reconciliation.forRange(company.id, toReconciliationRange(dto), 'api');
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getReconciliationRun',
    summary: 'A reconciliation run with its discrepancies',
  })
  @ApiOkResponse({ type: ReconciliationRunView })
  @ApiNotFoundResponse({ description: "`not_found` (also for another company's id)" })
  get(
    @Param('id', ResourceIdPipe) id: string,
    @CurrentCompany() company: Company,
  ): Promise<ReconciliationRunView> {
    return this.queries.get(company.id, id);
  }
}
