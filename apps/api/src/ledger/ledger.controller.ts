import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { JournalEntryListView, JournalRepository, TrialBalanceView } from '@ledgerkey/ledger';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import { ListQueryDto } from '../list-query.dto';

@ApiTags('Ledger')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/ledger')
export class LedgerController {
  constructor(private readonly journal: JournalRepository) {}

  @Get('entries')
  @ApiOperation({ operationId: 'listJournalEntries', summary: 'Journal entries in posting order' })
  @ApiOkResponse({ type: JournalEntryListView })
  async entries(
    @Query() query: ListQueryDto,
    @CurrentCompany() company: Company,
  ): Promise<JournalEntryListView> {
    const page = await this.journal.list(company.id, query.page());
    return { object: 'list', ...page };
  }

  @Get('trial-balance')
  @ApiOperation({
    operationId: 'getTrialBalance',
    summary: 'Debit and credit totals per account and currency',
    description:
      'Debits equal credits per currency, always: `totals[].balanced` says so. Amounts are sums across ' +
      'documents, so they are integer minor units as decimal strings ("18000000000000001"): exact ' +
      'beyond 2^53, where a JSON number is not.',
  })
  @ApiOkResponse({ type: TrialBalanceView })
  trialBalance(@CurrentCompany() company: Company): Promise<TrialBalanceView> {
    return this.journal.trialBalance(company.id);
  }
}
