import { Controller, Get, HttpCode, Post, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiConflictResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import {
  IsafSettingsQueries,
  IsafSettingsView,
  UpdateIsafSettingsDto,
  UpdateIsafSettingsHandler,
} from '@ledgerkey/reporting';
import { ApiKeyGuard, type Company, CurrentCompany } from '@ledgerkey/tenancy';

@ApiTags('Company')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/company/isaf-settings')
export class IsafSettingsController {
  constructor(
    private readonly updateSettings: UpdateIsafSettingsHandler,
    private readonly settings: IsafSettingsQueries,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'getIsafSettings',
    summary: 'How the i.SAF export declares each VAT rate (tax codes of the PVM classifier)',
  })
  @ApiOkResponse({ type: IsafSettingsView })
  get(@CurrentCompany() company: Company): Promise<IsafSettingsView> {
    return this.settings.get(company.id);
  }

  @Post('update')
  @HttpCode(200)
  @Idempotent({ operation: 'company.isaf_settings.update', body: UpdateIsafSettingsDto, status: 200 })
  @ApiOperation({
    operationId: 'updateIsafSettings',
    summary: 'Replace the VAT rate → i.SAF tax code mapping',
    description:
      'The whole mapping: rates not listed have no tax code afterwards (an export with such a rate ' +
      'answers 422 `isaf_tax_code_missing`). Retry with the same Idempotency-Key and body as often as ' +
      'needed: the first answer is replayed.',
  })
  @ApiOkResponse({ type: IsafSettingsView })
  @ApiConflictResponse({ description: '`idempotency_key_in_use`' })
  update(
    @IdempotentBody() dto: UpdateIsafSettingsDto,
    @CurrentCompany() company: Company,
  ): Promise<IsafSettingsView> {
    return this.updateSettings.execute(company.id, dto);
  }
}
