import { ApiProperty } from '@nestjs/swagger';
import { describeMinorUnits } from '@ledgerkey/money';
import { type Metadata, MetadataViewProperty } from '@ledgerkey/database';

export const PAYMENT_STATUSES = ['processing', 'succeeded', 'failed'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export class PaymentView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['payment'] }) object: 'payment';
  @ApiProperty({ format: 'uuid', description: 'The sales invoice it pays' }) invoiceId: string;
  @ApiProperty({ example: 12100, description: describeMinorUnits(12100, 'What is charged') }) amount: number;
  @ApiProperty({ example: 'EUR', description: "The invoice's currency" }) currency: string;
  @ApiProperty({
    enum: PAYMENT_STATUSES,
    description:
      '`processing` while the outcome is not known (a retry with the same Idempotency-Key resumes it); ' +
      '`succeeded` and `failed` are final.',
  })
  status: PaymentStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'card_declined',
    description:
      "With `failed`: the provider's decline code, or its refusal code when it refused the request " +
      '(e.g. `payment_method_unknown`); otherwise null.',
  })
  failureCode: string | null;
  @ApiProperty({ example: 'sandbox', description: 'The payment provider' }) provider: string;
  @ApiProperty({
    example: 'lkpay_9b2e4c1a-5d3f-4e8a-9c7b-1f2e3d4c5b6a',
    description:
      "Our stable reference of this payment, fixed before the provider is called: sent as the provider's " +
      'idempotency key and as the charge reference.',
  })
  providerReference: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'ch_5f0c9e1d2b3a4c5d6e7f8091',
    description: "The provider's charge, once it is known",
  })
  providerChargeId: string | null;
  @MetadataViewProperty() metadata: Metadata;
  @ApiProperty({ example: '2026-11-30T12:00:00.000Z', format: 'date-time' }) createdAt: string;
  @ApiProperty({
    example: '2026-11-30T12:00:01.000Z',
    format: 'date-time',
    description: 'When the outcome was recorded (= createdAt while processing)',
  })
  updatedAt: string;
}

export class PaymentListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [PaymentView] }) data: PaymentView[];
  @ApiProperty() hasMore: boolean;
}
