import { ApiProperty } from '@nestjs/swagger';
import { InvoiceLineView, PartyView, VatBreakdownView } from '@ledgerkey/documents';
import { describeMinorUnits } from '@ledgerkey/money';

export class InvoiceView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['invoice'] }) object: 'invoice';
  @ApiProperty({ example: 'INV-000001' }) number: string;
  @ApiProperty({ example: 'INV' }) series: string;
  @ApiProperty({ example: 1 }) sequence: number;
  @ApiProperty({ enum: ['issued'] }) status: 'issued';
  @ApiProperty({ type: String, nullable: true, example: 'order-1041' }) orderId: string | null;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ example: '2026-11-30', format: 'date' }) issueDate: string;
  @ApiProperty({ type: String, nullable: true, example: '2026-12-30', format: 'date' }) dueDate:
    string | null;
  @ApiProperty({ type: PartyView }) customer: PartyView;
  @ApiProperty({ type: [InvoiceLineView] }) lines: InvoiceLineView[];
  @ApiProperty({ type: [VatBreakdownView] }) vatBreakdown: VatBreakdownView[];
  @ApiProperty({ example: 10000, description: describeMinorUnits(10000, 'Total excluding VAT') })
  netTotal: number;
  @ApiProperty({ example: 2100, description: describeMinorUnits(2100, 'VAT') }) vatTotal: number;
  @ApiProperty({ example: 12100, description: describeMinorUnits(12100, 'Total including VAT') })
  grossTotal: number;
  @ApiProperty({ example: 0, description: describeMinorUnits(0, 'Gross of its credit notes') })
  creditedTotal: number;
  @ApiProperty({ example: 0, description: describeMinorUnits(0, 'Paid through payments and settlements') })
  paidTotal: number;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @ApiProperty({ example: '2026-11-30T12:00:00.000Z', format: 'date-time' }) createdAt: string;
}

export class InvoiceListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [InvoiceView] }) data: InvoiceView[];
  @ApiProperty() hasMore: boolean;
}
