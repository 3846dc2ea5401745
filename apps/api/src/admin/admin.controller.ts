import { Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { Idempotent, IdempotentBody } from '@ledgerkey/idempotency';
import { CreateCompanyDto, CreateCompanyHandler, CreatedCompanyView } from '@ledgerkey/tenancy';
import { AdminTokenGuard } from './admin-token.guard';
import { CREATE_COMPANY_OPERATION } from './create-company.operation';
import { ApiOperatorOnly } from '../openapi-audience';

@ApiOperatorOnly()
@ApiTags('Admin')
@ApiBearerAuth('admin')
@ApiNotFoundResponse({ description: 'ADMIN_API_TOKEN is not set: the admin API is off' })
@ApiTooManyRequestsResponse({
  description:
    'A request without the admin token from a client address over its rate limit (`rate_limited`, ' +
    '`Retry-After`), as `/v1` limits requests whose key is not verified: guessing the token meets it soon',
})
@UseGuards(AdminTokenGuard)
@Controller('admin')
export class AdminController {
  constructor(private readonly createCompany: CreateCompanyHandler) {}

  @Post('companies')
  @HttpCode(201)
  @Idempotent(CREATE_COMPANY_OPERATION)
  @ApiOperation({
    operationId: 'createCompany',
    summary: 'Create a company and its first API key (operators only)',
    description:
      "Only the API key's hash is stored with the company. Retry with the same Idempotency-Key " +
      'and body as often as needed: the first answer, API key included, is replayed ' +
      '(`Idempotent-Replayed: true`) and one company exists. That answer is stored with the key ' +
      'until it expires (IDEMPOTENCY_KEY_TTL), sealed by the response sealer.',
  })
  @ApiCreatedResponse({ type: CreatedCompanyView, description: 'Created (or replayed)' })
  create(@IdempotentBody() dto: CreateCompanyDto): Promise<CreatedCompanyView> {
    return this.createCompany.execute(dto);
  }
}
