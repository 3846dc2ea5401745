import { Controller, Get, Query, Res, UseGuards } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { IsafExportQueries, IsafExportQueryDto } from '@ledgerkey/reporting';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';
import type { Response } from 'express';

@ApiTags('Reports')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/exports')
export class ExportsController {
  constructor(private readonly isaf: IsafExportQueries) {}

  @Get('isaf')
  @ApiOperation({
    operationId: 'exportIsaf',
    summary: "Lithuanian i.SAF 1.2 file of a month (VMI's register of issued and received invoices)",
    description:
      '`iSAFFile` in namespace `http://www.vmi.lt/cms/imas/isaf`, `FileVersion` `iSAF1.2`, one part. ' +
      'Issued invoices (`SF`) and credit notes (`KS`, with `References` to the invoice they correct, ' +
      'amounts negative) dated in the month, and purchase invoices dated in it, each with a ' +
      '`DocumentTotal` per VAT rate under the tax code the company configured ' +
      '(`POST /v1/company/isaf-settings/update`; defaults 21 → PVM1, 9 → PVM2, 5 → PVM3). A month ' +
      'without documents still yields a valid file. Amounts are euros with two decimals; the header ' +
      "names the company by its profile's `registrationNumber`. Downloaded as " +
      '`isaf-<month>-<dataType>.xml`.',
  })
  @ApiProduces('application/xml')
  @ApiOkResponse({
    description: 'The i.SAF XML file',
    content: { 'application/xml': { schema: { type: 'string', format: 'binary' } } },
  })
  @ApiBadRequestResponse({
    description: '`validation_failed`: `month` is not YYYY-MM or `dataType` not F, S or P',
  })
  @ApiUnprocessableEntityResponse({
    description:
      '`company_profile_incomplete` (no registration number), `isaf_tax_code_missing` (a VAT rate ' +
      'without a tax code, with `vatRates`) or `isaf_currency_unsupported` (documents not in EUR)',
  })
  async exportIsaf(
    @Query() query: IsafExportQueryDto,
    @CurrentCompany() company: Company,
    @Res({ passthrough: true }) response: Response,
  ): Promise<string> {
    const xml = await this.isaf.export(company.id, query.month, query.dataType);
    response.setHeader('Content-Type', 'application/xml; charset=utf-8');
    response.setHeader(
      'Content-Disposition',
      `attachment; filename="isaf-${query.month}-${query.dataType}.xml"`,
    );
    return xml;
  }
}
