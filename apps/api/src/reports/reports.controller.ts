import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { VatReportQueries, VatReportQueryDto, VatReportView } from '@ledgerkey/reporting';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';

@ApiTags('Reports')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/reports')
export class ReportsController {
  constructor(private readonly vatReports: VatReportQueries) {}

  @Get('vat')
  @ApiOperation({
    operationId: 'getVatReport',
    summary: 'VAT report for a period: sales and purchases per VAT rate, and the VAT payable',
    description:
      'Documents dated within `from`–`to` (both included): invoices and purchase invoices by issue ' +
      'date, credit notes by the UTC date they were issued. Per currency and VAT rate: sales net and ' +
      'VAT (invoices − credit notes), purchases net and VAT, and `payable` (output − input VAT; ' +
      'negative is refundable). Equal to the movements of the ledger accounts `revenue`, ' +
      '`vat_payable`, `expense` and `vat_receivable` in the journal entries with `entryDate` in the ' +
      'period, to the cent. Amounts are integer minor units as decimal strings (exact beyond 2^53).',
  })
  @ApiOkResponse({ type: VatReportView })
  @ApiBadRequestResponse({
    description: '`validation_failed`: `from` or `to` missing or not a date, or `to` before `from`',
  })
  vat(@Query() query: VatReportQueryDto, @CurrentCompany() company: Company): Promise<VatReportView> {
    return this.vatReports.report(company.id, query);
  }
}
