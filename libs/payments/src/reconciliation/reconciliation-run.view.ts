import { ApiProperty } from '@nestjs/swagger';

export const DISCREPANCY_KINDS = [
  'missing_locally',
  'missing_at_provider',
  'amount_mismatch',
  'status_mismatch',
] as const;
export type DiscrepancyKind = (typeof DISCREPANCY_KINDS)[number];
export const DISCREPANCY_RESOLUTIONS = ['auto_resolved', 'needs_review'] as const;
export type DiscrepancyResolution = (typeof DISCREPANCY_RESOLUTIONS)[number];
export const DISCREPANCY_OBJECTS = ['charge', 'refund', 'payout'] as const;
export type DiscrepancyObject = (typeof DISCREPANCY_OBJECTS)[number];

export class DiscrepancyView {
  @ApiProperty({
    enum: DISCREPANCY_KINDS,
    description:
      '`missing_locally`: the provider has it, ledgerkey does not; `missing_at_provider`: the reverse; ' +
      '`amount_mismatch` / `status_mismatch`: both have it and disagree',
  })
  kind: DiscrepancyKind;
  @ApiProperty({
    enum: DISCREPANCY_RESOLUTIONS,
    description:
      '`auto_resolved`: the run fixed it through the same path an event would have taken (a processing payment ' +
      'completed with the charge, a refund booked, a payout imported); `needs_review`: left for a person',
  })
  resolution: DiscrepancyResolution;
  @ApiProperty({ enum: DISCREPANCY_OBJECTS, description: "The provider's object it concerns" })
  objectType: DiscrepancyObject;
  @ApiProperty({ type: String, nullable: true, example: 'ch_5f0c9e', description: "The provider's id" })
  providerObjectId: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'uuid',
    description: 'The local payment, refund or settlement',
  })
  localId: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '12100 EUR succeeded',
    description: 'What the provider says',
  })
  providerValue: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'processing', description: 'What ledgerkey has' })
  localValue: string | null;
  @ApiProperty({ example: 'charge ch_5f0c9e has no payment here' }) detail: string;
  @ApiProperty({ format: 'date-time', description: 'When a run first found it (kept while it stays open)' })
  firstSeenAt: string;
}

export class ReconciliationSummaryView {
  @ApiProperty() charges: number;
  @ApiProperty() payouts: number;
  @ApiProperty() payments: number;
  @ApiProperty() autoResolved: number;
  @ApiProperty() needsReview: number;
}

export class ReconciliationRunView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['reconciliation_run'] }) object: 'reconciliation_run';
  @ApiProperty({ example: 'sandbox' }) provider: string;
  @ApiProperty({ format: 'date-time', description: 'Inclusive' }) from: string;
  @ApiProperty({ format: 'date-time', description: 'Exclusive' }) to: string;
  @ApiProperty({
    enum: ['running', 'completed'],
    description:
      '`running` while the provider could not be read completely (a retry with the key resumes it)',
  })
  status: 'running' | 'completed';
  @ApiProperty({ enum: ['api', 'schedule'] }) trigger: 'api' | 'schedule';
  @ApiProperty({ type: ReconciliationSummaryView, nullable: true }) summary: ReconciliationSummaryView | null;
  @ApiProperty({ type: [DiscrepancyView] }) discrepancies: DiscrepancyView[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completedAt: string | null;
}
