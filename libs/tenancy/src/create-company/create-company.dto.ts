import { ApiProperty } from '@nestjs/swagger';
import { IsISO31661Alpha2, IsString, Matches } from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';
import { IsMoneyCurrency } from '@ledgerkey/money';

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
}

export class CreatedCompanyView {
  @ApiProperty({ format: 'uuid' })
  companyId: string;

  @ApiProperty({ description: 'Shown once; only its hash is stored.', example: 'lk_…' })
  apiKey: string;
}
