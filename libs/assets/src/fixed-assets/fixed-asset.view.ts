import { ApiProperty } from '@nestjs/swagger';

export class FixedAssetView {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: ['asset'] }) object: 'asset';
  @ApiProperty({ example: 'Delivery van' }) name: string;
  @ApiProperty({ example: 'EUR', description: "The company's currency" }) currency: string;
  @ApiProperty({ example: 2400000, description: 'Acquisition cost, minor units' }) cost: number;
  @ApiProperty({ example: 400000, description: 'Value left at the end of the useful life, minor units' })
  residualValue: number;
  @ApiProperty({ example: 60 }) usefulLifeMonths: number;
  @ApiProperty({ example: '2026-11', description: 'First month depreciated (a full month)' })
  startMonth: string;
  @ApiProperty({ example: '2031-10', description: 'Last month depreciated' }) endMonth: string;
  @ApiProperty({
    example: 33333,
    description: 'Every month but the last; the last takes the rounding remainder',
  })
  monthlyDepreciation: number;
  @ApiProperty({ example: 33333, description: 'Depreciation posted so far, minor units' })
  depreciatedTotal: number;
  @ApiProperty({ example: 2366667, description: 'cost − depreciatedTotal' }) bookValue: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class FixedAssetListView {
  @ApiProperty({ enum: ['list'] }) object: 'list';
  @ApiProperty({ type: [FixedAssetView] }) data: FixedAssetView[];
  @ApiProperty() hasMore: boolean;
}
