import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsObject, IsString, ValidateNested } from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';
import {
  IsDecimalString,
  MAX_QUANTITY_SCALE,
  MAX_UNIT_PRICE,
  MAX_VAT_RATE_SCALE,
  MinorUnits,
} from '@ledgerkey/money';

export const MAX_DOCUMENT_LINES = 500;

/**
 * A priced line of a document (sales invoice, credit note, purchase invoice). The class name
 * is the OpenAPI schema name all three share.
 */
export class InvoiceLineDto {
  @ApiProperty({ example: 'Consulting' })
  @IsString()
  @CodePointLength(1, 1000)
  description: string;

  @ApiProperty({
    example: '2',
    description: 'Decimal string, > 0, at most 4 decimals. "2" and "2.0" are the same quantity.',
  })
  @IsDecimalString({ maxScale: MAX_QUANTITY_SCALE, min: '0', exclusiveMin: true, max: '1000000000' })
  quantity: string;

  @ApiProperty({
    example: 5000,
    minimum: 0,
    maximum: MAX_UNIT_PRICE,
    description:
      'Price of one unit, excluding VAT, as an integer number of the currency minor unit: 5000 = 50.00 EUR ' +
      '(cents), 0–10^12. A decimal such as 50.00 is refused (400 validation_failed), never read as 50 cents.',
  })
  @MinorUnits({ min: 0, max: MAX_UNIT_PRICE })
  unitPrice: number;

  @ApiProperty({ example: '21', description: 'VAT percent as a decimal string, 0–100, at most 2 decimals' })
  @IsDecimalString({ maxScale: MAX_VAT_RATE_SCALE, min: '0', max: '100' })
  vatRate: string;
}

/** A validated line as commands carry it (quantity and rate canonical, as validation left them). */
export interface LineInput {
  description: string;
  quantity: string;
  unitPrice: number;
  vatRate: string;
}

/**
 * The `lines` property of a document request: an array of 1–500 line objects, each validated.
 * `api` adds to (or overrides) the OpenAPI description, e.g. `required: false` with
 * `@IsOptional()` above it.
 */
export function DocumentLines(api: ApiPropertyOptions = {}): PropertyDecorator {
  // applyDecorators runs its list first to last, stacked decorators run bottom-up: listed
  // bottom-up, validators register in the order they always had, so messages keep their order.
  return applyDecorators(
    Type(() => InvoiceLineDto),
    ValidateNested({ each: true }),
    IsObject({ each: true }),
    ArrayMaxSize(MAX_DOCUMENT_LINES),
    ArrayMinSize(1),
    IsArray(),
    ApiProperty({
      type: [InvoiceLineDto],
      minItems: 1,
      maxItems: MAX_DOCUMENT_LINES,
      ...api,
    } as ApiPropertyOptions),
  );
}

/** The lines as the command carries them: only the four line members, in this order. */
export function lineInputsOf(lines: readonly LineInput[]): LineInput[] {
  return lines.map((line) => ({
    description: line.description,
    quantity: line.quantity,
    unitPrice: line.unitPrice,
    vatRate: line.vatRate,
  }));
}
