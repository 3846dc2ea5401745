import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsEmail,
  IsIBAN,
  IsISO31661Alpha2,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  ValidateNested,
} from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';

export class CompanyAddressDto {
  @ApiPropertyOptional({ example: 'Gedimino pr. 1' })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 200)
  street?: string;

  @ApiPropertyOptional({ example: 'Vilnius' })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 100)
  city?: string;

  @ApiPropertyOptional({ example: '01103' })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 20)
  postalCode?: string;

  @ApiPropertyOptional({
    example: 'LT',
    description: "ISO 3166-1 alpha-2, upper case; defaults to the company's country",
  })
  @IsOptional()
  @Matches(/^[A-Z]{2}$/, { message: 'countryCode must be two upper-case letters' })
  @IsISO31661Alpha2()
  countryCode?: string;
}

/**
 * The company's profile: what its invoices and credit notes name as the seller. The whole
 * profile, both at company creation and on update: an omitted optional member is cleared.
 */
export class CompanyProfileDto {
  @ApiProperty({ example: 'UAB Pardavėjas', description: 'The registered name' })
  @IsString()
  @CodePointLength(1, 200)
  legalName: string;

  @ApiPropertyOptional({ example: 'LT100009876543', description: 'VAT identifier with its country prefix' })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Z0-9]{2,30}$/, { message: 'vatId must be 2–30 upper-case letters and digits' })
  vatId?: string;

  @ApiPropertyOptional({ example: '304567890', description: 'Company (legal entity) registration number' })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 50)
  @Matches(/^[\x21-\x7e]+( [\x21-\x7e]+)*$/, {
    message: 'registrationNumber must be visible ASCII (single spaces allowed)',
  })
  registrationNumber?: string;

  @ApiPropertyOptional({ type: CompanyAddressDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => CompanyAddressDto)
  address?: CompanyAddressDto;

  @ApiPropertyOptional({
    example: 'LT601010012345678901',
    description: 'Where customers pay: an IBAN without spaces, upper case, with a valid check sum',
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$/, {
    message: 'iban must be an IBAN without spaces, in upper case',
  })
  @IsIBAN()
  iban?: string;

  @ApiPropertyOptional({ example: 'billing@example.lt' })
  @IsOptional()
  @IsString()
  @CodePointLength(3, 254)
  @IsEmail()
  email?: string;

  @ApiPropertyOptional({
    example: '0200:304567890',
    description:
      'Peppol participant id as `<ISO 6523 scheme>:<identifier>` (e.g. 0200 for a Lithuanian ' +
      'company code, 9939 for a Swedish VAT id): the seller endpoint of its UBL documents',
  })
  @IsOptional()
  @IsString()
  @CodePointLength(6, 60)
  @Matches(/^[0-9]{4}:[A-Za-z0-9._-]{1,50}$/, {
    message: 'peppolId must be <4-digit scheme>:<identifier>',
  })
  peppolId?: string;
}
