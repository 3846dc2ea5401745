import { ApiProperty } from '@nestjs/swagger';

export class PartyView {
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) vatId: string | null;
  @ApiProperty() countryCode: string;
  @ApiProperty({ type: String, nullable: true }) address: string | null;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
}

export class InvoiceLineView {
  @ApiProperty({ example: 1 }) position: number;
  @ApiProperty({ example: 'Consulting' }) description: string;
  @ApiProperty({ example: '2' }) quantity: string;
  @ApiProperty({ example: 5000 }) unitPrice: number;
  @ApiProperty({ example: '21' }) vatRate: string;
  @ApiProperty({ example: 10000, description: 'quantity × unitPrice, rounded half away from zero' })
  netAmount: number;
}

export class VatBreakdownView {
  @ApiProperty({ example: '21' }) vatRate: string;
  @ApiProperty({ example: 10000 }) netAmount: number;
  @ApiProperty({ example: 2100 }) vatAmount: number;
}

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
  @ApiProperty({ example: 10000 }) netTotal: number;
  @ApiProperty({ example: 2100 }) vatTotal: number;
  @ApiProperty({ example: 12100 }) grossTotal: number;
  @ApiProperty({ example: 0 }) creditedTotal: number;
  @ApiProperty({ example: 0 }) paidTotal: number;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @ApiProperty({ example: '2026-11-30T12:00:00.000Z', format: 'date-time' }) createdAt: string;
}

export class InvoiceListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [InvoiceView] }) data: InvoiceView[];
  @ApiProperty() hasMore: boolean;
}
