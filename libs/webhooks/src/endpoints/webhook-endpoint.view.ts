import { ApiProperty } from '@nestjs/swagger';
import { type Metadata, MetadataViewProperty } from '@ledgerkey/database';
import { EVENT_TYPES } from '@ledgerkey/outbox';

export class WebhookEndpointView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['webhook_endpoint'] }) object: 'webhook_endpoint';
  @ApiProperty({ example: 'https://example.com/webhooks/ledgerkey' }) url: string;
  @ApiProperty({ type: [String], enum: [...EVENT_TYPES, '*'], example: ['invoice.created'] })
  enabledEvents: string[];
  @ApiProperty({ enum: ['enabled', 'disabled'] }) status: 'enabled' | 'disabled';
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) disabledAt: string | null;
  @MetadataViewProperty() metadata: Metadata;
}

export class CreatedWebhookEndpointView extends WebhookEndpointView {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description:
      'Standard Webhooks signing secret. Shown only in this response (and its idempotent replay ' +
      'while the Idempotency-Key is retained); store it now.',
  })
  secret: string;
}

export class WebhookEndpointListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [WebhookEndpointView] }) data: WebhookEndpointView[];
  @ApiProperty() hasMore: boolean;
}
