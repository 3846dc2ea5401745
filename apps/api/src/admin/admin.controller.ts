import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNotFoundResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CreateCompanyDto, CreateCompanyHandler, CreatedCompanyView } from '@ledgerkey/tenancy';
import { AdminTokenGuard } from './admin-token.guard';

@ApiTags('Admin')
@ApiBearerAuth('admin')
@ApiNotFoundResponse({ description: 'ADMIN_API_TOKEN is not set: the admin API is off' })
@UseGuards(AdminTokenGuard)
@Controller('admin')
export class AdminController {
  constructor(private readonly createCompany: CreateCompanyHandler) {}

  @Post('companies')
  @HttpCode(201)
  @ApiOperation({
    operationId: 'createCompany',
    summary: 'Create a company and its first API key (operators only)',
    description: 'The API key is shown once; only its hash is stored.',
  })
  @ApiCreatedResponse({ type: CreatedCompanyView })
  create(@Body() dto: CreateCompanyDto): Promise<CreatedCompanyView> {
    return this.createCompany.execute(dto);
  }
}
