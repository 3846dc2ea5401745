import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID } from 'class-validator';
import { CodePointLength, commandMetadataOf, type Metadata, MetadataProperty } from '@ledgerkey/database';
import { DocumentLines, InvoiceLineDto, lineInputsOf } from '@ledgerkey/documents';

export const CREDIT_NOTE_REASONS = [
  'duplicate',
  'fraudulent',
  'order_change',
  'product_unsatisfactory',
  'other',
] as const;
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number];

export class IssueCreditNoteDto {
  @ApiProperty({
    format: 'uuid',
    example: '00000000-0000-4000-8000-000000000000',
    description:
      'The invoice to credit, of your company: the `id` in the answer of `POST /v1/sales/invoices/create`, ' +
      'or of an invoice listed by `GET /v1/sales/invoices`. The example is a placeholder: replace it (as ' +
      'it stands it answers 404 not_found).',
  })
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

  @IsOptional()
  @DocumentLines({
    description:
      'What to credit. Omit to credit everything not yet credited: exactly the remaining net and ' +
      'VAT per rate, so the invoice and its credit notes net to zero.',
    required: false,
  })
  lines?: InvoiceLineDto[];

  @MetadataProperty()
  metadata?: Metadata;

  /** Canonical lines (quantities and rates normalized by validation); absent fields are null. */
  fingerprintPayload(): unknown {
    return {
      invoiceId: this.invoiceId.toLowerCase(),
      reason: this.reason,
      memo: this.memo ?? null,
      lines: this.lines == null ? null : lineInputsOf(this.lines),
      metadata: commandMetadataOf(this.metadata),
    };
  }
}
