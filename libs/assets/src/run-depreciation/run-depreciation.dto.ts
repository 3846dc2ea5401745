import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { ACCOUNTING_MONTH } from '../accounting-month';

/** `POST /v1/depreciation-runs/create`. */
export class RunDepreciationDto {
  @ApiProperty({
    example: '2026-11',
    pattern: ACCOUNTING_MONTH.source,
    description: 'The month to depreciate',
  })
  @Matches(ACCOUNTING_MONTH, { message: 'period must be a month written YYYY-MM' })
  period: string;
}
