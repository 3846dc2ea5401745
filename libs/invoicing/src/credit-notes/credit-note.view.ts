import { ApiProperty } from '@nestjs/swagger';
import { CREDIT_NOTE_REASONS, type CreditNoteReason } from '../issue-credit-note/issue-credit-note.dto';
import { type Metadata, MetadataViewProperty } from '@ledgerkey/database';
import { InvoiceLineView, VatBreakdownView } from '@ledgerkey/documents';
import { describeMinorUnits } from '@ledgerkey/money';
import { SellerView } from '@ledgerkey/tenancy';

export class CreditNoteView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['credit_note'] }) object: 'credit_note';
  @ApiProperty({ example: 'CN-000001' }) number: string;
  @ApiProperty({ example: 'CN' }) series: string;
  @ApiProperty({ example: 1 }) sequence: number;
  @ApiProperty({ format: 'uuid' }) invoiceId: string;
  @ApiProperty({ example: 'INV-000001' }) invoiceNumber: string;
  @ApiProperty({ enum: CREDIT_NOTE_REASONS }) reason: CreditNoteReason;
  @ApiProperty({ type: String, nullable: true }) memo: string | null;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({
    type: SellerView,
    description: 'The company profile when the credit note was issued (immutable)',
  })
  seller: SellerView;
  @ApiProperty({ type: [InvoiceLineView] }) lines: InvoiceLineView[];
  @ApiProperty({ type: [VatBreakdownView] }) vatBreakdown: VatBreakdownView[];
  @ApiProperty({ example: 5000, description: describeMinorUnits(5000, 'Credited excluding VAT') })
  netTotal: number;
  @ApiProperty({ example: 1050, description: describeMinorUnits(1050, 'Credited VAT') }) vatTotal: number;
  @ApiProperty({ example: 6050, description: describeMinorUnits(6050, 'Credited including VAT') })
  grossTotal: number;
  @MetadataViewProperty() metadata: Metadata;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class CreditNoteListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [CreditNoteView] }) data: CreditNoteView[];
  @ApiProperty() hasMore: boolean;
}
