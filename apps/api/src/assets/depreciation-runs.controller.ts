import { Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import {
  DepreciationRunListView,
  DepreciationRunQueries,
  DepreciationRunView,
  RunDepreciationDto,
  RunDepreciationHandler,
} from '@ledgerkey/assets';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ReadRoutes } from '../read-routes';

@ApiTags('Fixed assets')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/depreciation-runs')
export class DepreciationRunsController extends ReadRoutes({
  view: DepreciationRunView,
  listView: DepreciationRunListView,
  get: {
    operationId: 'getDepreciationRun',
    summary: 'Retrieve a depreciation run',
    notFound: "`not_found` (also for another company's id)",
  },
  list: { operationId: 'listDepreciationRuns', summary: 'List depreciation runs in period order' },
}) {
  constructor(
    private readonly runDepreciation: RunDepreciationHandler,
    protected override readonly queries: DepreciationRunQueries,
  ) {
    super();
  }

  @Post('create')
  @HttpCode(201)
  @Idempotent({
    operation: 'depreciation_runs.create',
    body: RunDepreciationDto,
    status: 201,
    location: (run: DepreciationRunView) => `/v1/depreciation-runs/${run.id}`,
  })
  @ApiOperation({
    operationId: 'createDepreciationRun',
    summary: 'Depreciate a month: one journal entry per active asset',
    description:
      "Posts, for every asset whose useful life includes `period`, that month's straight-line amount: " +
      'debit `depreciation_expense`, credit `accumulated_depreciation`, dated the last day of the ' +
      'period (`entryDate`). One run per period, for ever: a second one, under any Idempotency-Key, ' +
      'after the key expired or at the same moment, answers 409 `depreciation_already_run` naming the ' +
      'first (`existingRunId`); the database enforces one charge per (company, asset, period). A ' +
      'period without active assets still gets its (empty) run. Assets must exist before their ' +
      'months are run: creating one that starts in a depreciated period is refused.',
  })
  @ApiCreatedResponse({ type: DepreciationRunView, description: 'Posted (or replayed)' })
  @ApiConflictResponse({
    description: '`depreciation_already_run` (with `existingRunId`) or `idempotency_key_in_use`',
  })
  create(
    @IdempotentBody() dto: RunDepreciationDto,
    @CurrentCompany() company: Company,
  ): Promise<DepreciationRunView> {
    return this.runDepreciation.execute(company, dto);
  }
}
