import { ApiProperty } from '@nestjs/swagger';
import { IsIn, Matches } from 'class-validator';
import { ISAF_DATA_TYPES, type IsafDataType } from './isaf-file';

/** `GET /v1/exports/isaf?month=YYYY-MM&dataType=F|S|P`. */
export class IsafExportQueryDto {
  @ApiProperty({
    example: '2026-11',
    pattern: '^(20[1-9][0-9])-(0[1-9]|1[0-2])$',
    description: 'The tax period: a calendar month, YYYY-MM',
  })
  @Matches(/^(20[1-9][0-9])-(0[1-9]|1[0-2])$/, { message: 'month must be a month written YYYY-MM' })
  month: string;

  @ApiProperty({
    enum: ISAF_DATA_TYPES,
    example: 'F',
    description:
      'F: sales and purchases; S: issued invoices and credit notes only; P: received invoices only',
  })
  @IsIn(ISAF_DATA_TYPES, { message: 'dataType must be F, S or P' })
  dataType: IsafDataType;
}

/** The first and last day of a month written YYYY-MM. */
export function monthPeriod(month: string): { from: string; to: string } {
  const [year, monthNumber] = month.split('-').map(Number);
  const lastDay = new Date(Date.UTC(year, monthNumber, 0)).getUTCDate();
  return { from: `${month}-01`, to: `${month}-${String(lastDay).padStart(2, '0')}` };
}
