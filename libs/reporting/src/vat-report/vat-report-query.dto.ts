import { ApiProperty } from '@nestjs/swagger';
import { IsCalendarDate } from '@ledgerkey/documents';
import { IsNotBefore } from '../reporting-period';

/** `GET /v1/reports/vat?from=&to=`: both days included. */
export class VatReportQueryDto {
  @ApiProperty({ format: 'date', example: '2026-11-01', description: 'First day (included)' })
  @IsCalendarDate()
  from: string;

  @ApiProperty({
    format: 'date',
    example: '2026-11-30',
    description: 'Last day (included), not before `from`',
  })
  @IsCalendarDate()
  @IsNotBefore('from')
  to: string;
}
