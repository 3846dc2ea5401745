import { ApiProperty } from '@nestjs/swagger';

export const ATTEMPT_RESULTS = ['succeeded', 'failed', 'abandoned'] as const;
export type AttemptResult = (typeof ATTEMPT_RESULTS)[number];

export class WebhookAttemptView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['webhook_attempt'] }) object: 'webhook_attempt';
  @ApiProperty({ format: 'uuid' }) endpointId: string;
  @ApiProperty({ format: 'uuid', description: 'The event, and the `webhook-id` header of the request' })
  eventId: string;
  @ApiProperty({ format: 'uuid' }) deliveryId: string;
  @ApiProperty({ minimum: 1, description: '1 for the first attempt of a delivery' }) attemptNumber: number;
  @ApiProperty({
    enum: ATTEMPT_RESULTS,
    description:
      '`succeeded`: 2xx. `failed`: another status, a network error, a timeout or a refused target. ' +
      '`abandoned`: the worker stopped mid-attempt; the request may or may not have arrived.',
  })
  result: AttemptResult;
  @ApiProperty({ type: Number, nullable: true, description: 'null when no answer arrived' })
  statusCode: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'null for abandoned attempts' })
  durationMs: number | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({ format: 'date-time' }) finishedAt: string;
}

export class WebhookAttemptListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [WebhookAttemptView] }) data: WebhookAttemptView[];
  @ApiProperty() hasMore: boolean;
}
