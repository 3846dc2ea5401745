import { ApiProperty } from '@nestjs/swagger';
import { type Metadata, MetadataViewProperty } from '@ledgerkey/database';
import { InvoiceLineView, PartyView, VatBreakdownView } from '@ledgerkey/documents';
import { describeMinorUnits } from '@ledgerkey/money';

/** A recorded supplier invoice, as create and GET answer it (byte-identical). */
export class PurchaseInvoiceView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['purchase_invoice'] }) object: 'purchase_invoice';
  @ApiProperty({ example: 'TK-2026/0042', description: "The supplier's number, as sent" })
  documentNumber: string;
  @ApiProperty({ type: PartyView }) supplier: PartyView;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ example: '2026-11-30', format: 'date' }) issueDate: string;
  @ApiProperty({ type: String, nullable: true, example: '2026-12-30', format: 'date' }) dueDate:
    string | null;
  @ApiProperty({ type: [InvoiceLineView] }) lines: InvoiceLineView[];
  @ApiProperty({ type: [VatBreakdownView] }) vatBreakdown: VatBreakdownView[];
  @ApiProperty({ example: 10000, description: describeMinorUnits(10000, 'Total excluding VAT') })
  netTotal: number;
  @ApiProperty({ example: 2100, description: describeMinorUnits(2100, 'VAT') }) vatTotal: number;
  @ApiProperty({ example: 12100, description: describeMinorUnits(12100, 'Total including VAT') })
  grossTotal: number;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @MetadataViewProperty() metadata: Metadata;
  @ApiProperty({ example: '2026-11-30T12:00:00.000Z', format: 'date-time' }) createdAt: string;
}

export class PurchaseInvoiceListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [PurchaseInvoiceView] }) data: PurchaseInvoiceView[];
  @ApiProperty() hasMore: boolean;
}
