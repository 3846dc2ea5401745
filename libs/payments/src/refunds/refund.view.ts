import { ApiProperty } from '@nestjs/swagger';

/** A refund of a payment, made at the provider and booked here once (event `payment.refunded`). */
export class RefundView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['refund'] }) object: 'refund';
  @ApiProperty({ format: 'uuid' }) paymentId: string;
  @ApiProperty({ format: 'uuid' }) invoiceId: string;
  @ApiProperty({ example: 300 }) amount: number;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ example: 're_1f2e3d' }) providerRefundId: string;
  @ApiProperty({ example: 'ch_5f0c9e' }) providerChargeId: string;
  @ApiProperty({ format: 'date-time', description: 'When the provider made it' }) refundedAt: string;
  @ApiProperty({ format: 'date-time', description: 'When ledgerkey booked it' }) createdAt: string;
}
