import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsObject,
  Matches,
  ValidateNested,
} from 'class-validator';
import { IsDecimalString } from '@ledgerkey/money';
import { ISAF_TAX_CODE_PATTERN, type IsafTaxCode } from '../isaf-settings/isaf-tax-codes';

export class IsafTaxCodeDto {
  @ApiProperty({ example: '21', description: 'VAT rate, percent: decimal string 0–100, at most 2 decimals' })
  @IsDecimalString({ min: '0', max: '100', maxScale: 2 })
  vatRate: string;

  @ApiProperty({ example: 'PVM1', pattern: ISAF_TAX_CODE_PATTERN.source })
  @Matches(ISAF_TAX_CODE_PATTERN, { message: 'taxCode must be PVM followed by 1–3 digits' })
  taxCode: string;
}

/** `POST /v1/company/isaf-settings/update`: the whole mapping, replacing the current one. */
export class UpdateIsafSettingsDto {
  @ApiProperty({
    type: [IsafTaxCodeDto],
    description: 'One entry per VAT rate the company declares (1–50, rates unique)',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(50)
  @ArrayUnique((code: IsafTaxCodeDto) => code?.vatRate, { message: 'taxCodes must name each vatRate once' })
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => IsafTaxCodeDto)
  taxCodes: IsafTaxCodeDto[];

  /** The mapping as stored: rates canonical, in rate order (highest first). */
  fingerprintPayload(): IsafTaxCode[] {
    return this.taxCodes
      .map(({ vatRate, taxCode }) => ({ vatRate, taxCode }))
      .sort((a, b) => Number(b.vatRate) - Number(a.vatRate));
  }
}
