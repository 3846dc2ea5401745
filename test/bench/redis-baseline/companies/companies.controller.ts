import { createHash, randomBytes } from 'node:crypto';
import { Body, Controller, Post, UseGuards } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsISO31661Alpha2, IsString, Length, Matches } from 'class-validator';
import type { DataSource } from 'typeorm';
import { DocumentSequence } from '../invoices/document-sequence.entity';
import { AdminTokenGuard } from './admin-token.guard';
import { Company } from './company.entity';

class CreateCompanyDto {
  @IsString()
  @Length(1, 200)
  name: string;

  @IsISO31661Alpha2()
  countryCode: string;

  @Matches(/^[A-Z]{3}$/)
  currency: string;
}

/** Onboarding: a company, its API key (shown once) and its default invoice series. */
@Controller('admin/companies')
@UseGuards(AdminTokenGuard)
export class CompaniesController {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  @Post()
  async create(@Body() dto: CreateCompanyDto): Promise<{ companyId: string; apiKey: string }> {
    const apiKey = `sk_${randomBytes(24).toString('base64url')}`;
    const company = await this.dataSource.transaction(async (manager) => {
      const saved = await manager.save(
        manager.create(Company, { ...dto, apiKeyHash: createHash('sha256').update(apiKey).digest('hex') }),
      );
      await manager.insert(DocumentSequence, { companyId: saved.id, series: 'INV', lastValue: '0' });
      return saved;
    });
    return { companyId: company.id, apiKey };
  }
}
