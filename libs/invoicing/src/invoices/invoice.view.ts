import { ApiProperty } from '@nestjs/swagger';
import { type Metadata, MetadataViewProperty } from '@ledgerkey/database';
import { InvoiceLineView, PartyView, VatBreakdownView } from '@ledgerkey/documents';
import { describeMinorUnits } from '@ledgerkey/money';
import { SellerView } from '@ledgerkey/tenancy';
import {
  INVOICE_CREDIT_STATUSES,
  type InvoiceCreditStatus,
  INVOICE_PAYMENT_STATUSES,
  type InvoicePaymentStatus,
} from './invoice-status';

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
  @ApiProperty({
    type: SellerView,
    description:
      'The company profile when the invoice was issued (immutable: later profile changes do not alter it)',
  })
  seller: SellerView;
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
  @ApiProperty({
    example: 0,
    description: describeMinorUnits(0, 'Paid through payments and settlements, net of refunds'),
  })
  paidTotal: number;
  @ApiProperty({
    example: 12100,
    description: describeMinorUnits(
      12100,
      'grossTotal − creditedTotal − paidTotal: what is still owed; negative when the invoice was paid ' +
        'and then credited (that much is due back to the customer as a refund)',
    ),
  })
  outstandingAmount: number;
  @ApiProperty({
    enum: INVOICE_PAYMENT_STATUSES,
    description:
      '`paid` when nothing is outstanding (outstandingAmount ≤ 0: paid, credited or both), `partially_paid` when a payment or ' +
      'settlement was applied and some is still owed, else `unpaid`',
  })
  paymentStatus: InvoicePaymentStatus;
  @ApiProperty({
    enum: INVOICE_CREDIT_STATUSES,
    description: '`credited` when credit notes cover the whole gross total, `partially_credited`, or `none`',
  })
  creditStatus: InvoiceCreditStatus;
  @ApiProperty({ type: String, nullable: true }) notes: string | null;
  @MetadataViewProperty() metadata: Metadata;
  @ApiProperty({ example: '2026-11-30T12:00:00.000Z', format: 'date-time' }) createdAt: string;
}

export class InvoiceListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [InvoiceView] }) data: InvoiceView[];
  @ApiProperty() hasMore: boolean;
}
