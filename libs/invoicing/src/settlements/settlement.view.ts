import { ApiProperty } from '@nestjs/swagger';
import { describeMinorUnits } from '@ledgerkey/money';
import { type Metadata, MetadataViewProperty } from '@ledgerkey/database';

export const SETTLEMENT_SOURCES = ['api', 'provider'] as const;
export type SettlementSource = (typeof SETTLEMENT_SOURCES)[number];

export class SettlementAllocationView {
  @ApiProperty({ format: 'uuid' }) invoiceId: string;
  @ApiProperty({ example: 'INV-000001' }) invoiceNumber: string;
  @ApiProperty({ example: 12100, description: describeMinorUnits(12100) }) amount: number;
}

export class SettlementView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['settlement'] }) object: 'settlement';
  @ApiProperty({ example: 'po_1NxY' }) payoutId: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ example: '2026-11-30T10:00:00.000Z', format: 'date-time', description: 'UTC, milliseconds' })
  paidAt: string;
  @ApiProperty({ example: 150, description: describeMinorUnits(150, 'What the provider kept') })
  feeAmount: number;
  @ApiProperty({ example: 12100, description: describeMinorUnits(12100, 'Sum of the allocations') })
  allocatedTotal: number;
  @ApiProperty({
    example: 11950,
    description: describeMinorUnits(11950, 'allocatedTotal − feeAmount: what reached the bank'),
  })
  netAmount: number;
  @ApiProperty({ type: [SettlementAllocationView], description: 'In invoiceId order' })
  allocations: SettlementAllocationView[];
  @ApiProperty({
    enum: SETTLEMENT_SOURCES,
    description:
      "`api`: pushed with POST /v1/settlements/create (credits receivables and raises the invoices' paidTotal); " +
      "`provider`: imported from the payment provider's `payout.paid` (credits provider clearing: the " +
      'payments it pays out already lowered receivables and raised paidTotal)',
  })
  source: SettlementSource;
  @MetadataViewProperty() metadata: Metadata;
  @ApiProperty({ example: '2026-11-30T12:00:00.000Z', format: 'date-time' }) createdAt: string;
}

export class SettlementListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [SettlementView] }) data: SettlementView[];
  @ApiProperty() hasMore: boolean;
}
