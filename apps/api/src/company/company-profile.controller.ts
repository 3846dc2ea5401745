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
  ApiKeyGuard,
  type Company,
  CompanyProfileQueries,
  CompanyProfileView,
  CurrentCompany,
  UpdateCompanyProfileDto,
  UpdateCompanyProfileHandler,
} from '@ledgerkey/tenancy';

@ApiTags('Company')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing or unknown API key (`unauthorized`)' })
@UseGuards(ApiKeyGuard)
@Controller('v1/company/profile')
export class CompanyProfileController {
  constructor(
    private readonly updateProfile: UpdateCompanyProfileHandler,
    private readonly profiles: CompanyProfileQueries,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'getCompanyProfile',
    summary: 'The company profile new invoices and credit notes name as their seller',
  })
  @ApiOkResponse({ type: CompanyProfileView })
  get(@CurrentCompany() company: Company): Promise<CompanyProfileView> {
    return this.profiles.get(company.id);
  }

  @Post('update')
  @HttpCode(200)
  @Idempotent({ operation: 'company.profile.update', body: UpdateCompanyProfileDto, status: 200 })
  @ApiOperation({
    operationId: 'updateCompanyProfile',
    summary: 'Replace the company profile (legal name, VAT id, registration number, address, IBAN, …)',
    description:
      'The body is the whole profile: an omitted optional member is cleared; `address.countryCode` ' +
      "defaults to the company's country. Documents issued after the commit name the new profile " +
      'as their `seller`; issued invoices and credit notes keep the seller they were issued with. ' +
      'Retry with the same Idempotency-Key and body as often as needed: the first answer is replayed ' +
      '(`Idempotent-Replayed: true`). Sending the same profile again under a new key changes nothing.',
  })
  @ApiOkResponse({ type: CompanyProfileView, description: 'The whole profile, as stored (or replayed)' })
  @ApiConflictResponse({ description: '`idempotency_key_in_use`' })
  update(
    @IdempotentBody() dto: UpdateCompanyProfileDto,
    @CurrentCompany() company: Company,
  ): Promise<CompanyProfileView> {
    return this.updateProfile.execute(company, dto);
  }
}
