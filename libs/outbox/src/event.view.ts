import { ApiProperty } from '@nestjs/swagger';

export const EVENT_TYPES = [
  'invoice.created',
  'credit_note.created',
  'settlement.created',
  'purchase_invoice.created',
  'payment.succeeded',
  'payment.failed',
  'payment.refunded',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export class EventView {
  @ApiProperty({ format: 'uuid', description: 'Stable: also the `webhook-id` of every delivery' })
  id: string;
  @ApiProperty({ enum: ['event'] }) object: 'event';
  @ApiProperty({ enum: EVENT_TYPES }) type: EventType;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({
    description: '`{ object: <the created document or the payment, as its GET returns it> }`',
  })
  data: { object: unknown };
}

export class EventListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [EventView] }) data: EventView[];
  @ApiProperty() hasMore: boolean;
}
