import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  ValidateNested,
} from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';
import { InvoiceLineDto, MAX_INVOICE_LINES } from '../issue-invoice/issue-invoice.dto';

export const CREDIT_NOTE_REASONS = [
  'duplicate',
  'fraudulent',
  'order_change',
  'product_unsatisfactory',
  'other',
] as const;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];

export class IssueCreditNoteDto {
  @ApiProperty({ format: 'uuid', description: 'The invoice to credit (of your company)' })
  @IsUUID('all')
  invoiceId: string;

  @ApiProperty({ enum: CREDIT_NOTE_REASONS, example: 'duplicate' })
  @IsIn(CREDIT_NOTE_REASONS)
  reason: CreditNoteReason;

  @ApiPropertyOptional({ example: 'Issued twice by mistake' })
  @IsOptional()
  @IsString()
  @CodePointLength(0, 2000)
  memo?: string;

  @ApiPropertyOptional({
    type: [InvoiceLineDto],
    minItems: 1,
    maxItems: MAX_INVOICE_LINES,
    description:
      'What to credit. Omit to credit everything not yet credited: exactly the remaining net and ' +
      'VAT per rate, so the invoice and its credit notes net to zero.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_INVOICE_LINES)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => InvoiceLineDto)
  lines?: InvoiceLineDto[];

  /** Canonical lines (quantities and rates normalized by validation); absent fields are null. */
  fingerprintPayload(): unknown {
    return {
      invoiceId: this.invoiceId.toLowerCase(),
      reason: this.reason,
      memo: this.memo ?? null,
      lines:
        this.lines?.map((line) => ({
          description: line.description,
          quantity: line.quantity,
          unitPrice: line.unitPrice,
          vatRate: line.vatRate,
        })) ?? null,
    };
  }
}
