import { ApiProperty } from '@nestjs/swagger';
import { describeMinorUnits } from '@ledgerkey/money';

/** A priced line as documents show it. (Class names here are the OpenAPI schema names.) */
export class InvoiceLineView {
  @ApiProperty({ example: 1 }) position: number;
  @ApiProperty({ example: 'Consulting' }) description: string;
  @ApiProperty({ example: '2' }) quantity: string;
  @ApiProperty({ example: 5000, description: describeMinorUnits(5000, 'Price of one unit, excluding VAT') })
  unitPrice: number;
  @ApiProperty({ example: '21' }) vatRate: string;
  @ApiProperty({
    example: 10000,
    description: describeMinorUnits(10000, 'quantity × unitPrice, rounded half away from zero'),
  })
  netAmount: number;
}

export class VatBreakdownView {
  @ApiProperty({ example: '21' }) vatRate: string;
  @ApiProperty({ example: 10000, description: describeMinorUnits(10000, 'Net of the lines at this rate') })
  netAmount: number;
  @ApiProperty({ example: 2100, description: describeMinorUnits(2100, 'VAT at this rate') })
  vatAmount: number;
}
