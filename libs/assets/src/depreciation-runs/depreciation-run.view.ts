import { ApiProperty } from '@nestjs/swagger';

export class DepreciationChargeView {
  @ApiProperty({ format: 'uuid', description: "The charge; its journal entry's sourceId" }) id: string;
  @ApiProperty({ format: 'uuid' }) assetId: string;
  @ApiProperty({ example: 1, description: "Which month of the asset's useful life (1 = its start month)" })
  monthNumber: number;
  @ApiProperty({ example: 33333, description: 'Minor units' }) amount: number;
}

export class DepreciationRunView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['depreciation_run'] }) object: 'depreciation_run';
  @ApiProperty({ example: '2026-11' }) period: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty({ example: 33333, description: 'Sum of the charges, minor units' }) totalAmount: number;
  @ApiProperty({
    type: [DepreciationChargeView],
    description: 'One per asset depreciated in the period, each posted as its own journal entry',
  })
  charges: DepreciationChargeView[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class DepreciationRunListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [DepreciationRunView] }) data: DepreciationRunView[];
  @ApiProperty() hasMore: boolean;
}
