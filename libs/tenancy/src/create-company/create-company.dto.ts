import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsISO31661Alpha2, IsObject, IsOptional, IsString, Matches, ValidateNested } from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';
import { IsMoneyCurrency } from '@ledgerkey/money';
import { CompanyProfileDto } from '../company-profile/company-profile.dto';

export class CreateCompanyDto {
  @ApiProperty({ example: 'UAB Pardavėjas' })
  @IsString()
  @CodePointLength(1, 200)
  name: string;

  @ApiProperty({ example: 'LT', description: 'ISO 3166-1 alpha-2, upper case' })
  @Matches(/^[A-Z]{2}$/, { message: 'countryCode must be two upper-case letters' })
  @IsISO31661Alpha2()
  countryCode: string;

  @ApiProperty({ example: 'EUR', description: 'ISO 4217, upper case: the default invoice currency' })
  @IsMoneyCurrency()
  currency: string;

  @ApiPropertyOptional({
    type: CompanyProfileDto,
    description:
      'The seller details its documents carry (see `POST /v1/company/profile/update`). ' +
      'Without it the legal name is `name` and the rest is unset.',
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => CompanyProfileDto)
  profile?: CompanyProfileDto;
}

export class CreatedCompanyView {
  @ApiProperty({ format: 'uuid' })
  companyId: string;

  @ApiProperty({ description: 'Shown once; only its hash is stored.', example: 'lk_…' })
  apiKey: string;
}
