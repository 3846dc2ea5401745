import { ApiProperty } from '@nestjs/swagger';

/** A priced line as documents show it. (Class names here are the OpenAPI schema names.) */
export class InvoiceLineView {
  @ApiProperty({ example: 1 }) position: number;
  @ApiProperty({ example: 'Consulting' }) description: string;
  @ApiProperty({ example: '2' }) quantity: string;
  @ApiProperty({ example: 5000 }) unitPrice: number;
  @ApiProperty({ example: '21' }) vatRate: string;
  @ApiProperty({ example: 10000, description: 'quantity × unitPrice, rounded half away from zero' })
  netAmount: number;
}

export class VatBreakdownView {
  @ApiProperty({ example: '21' }) vatRate: string;
  @ApiProperty({ example: 10000 }) netAmount: number;
  @ApiProperty({ example: 2100 }) vatAmount: number;
}
