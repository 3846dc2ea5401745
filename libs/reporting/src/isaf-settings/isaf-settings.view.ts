import { ApiProperty } from '@nestjs/swagger';

export class IsafTaxCodeView {
  @ApiProperty({ example: '21', description: 'VAT rate, percent' }) vatRate: string;
  @ApiProperty({ example: 'PVM1', description: "VMI's PVM classifier code" }) taxCode: string;
}

/** `GET /v1/company/isaf-settings`: how the i.SAF export declares each VAT rate. */
export class IsafSettingsView {
  @ApiProperty({ enum: ['isaf_settings'] }) object: 'isaf_settings';
  @ApiProperty({
    type: [IsafTaxCodeView],
    description:
      'The mapping in force: the configured one, or the defaults (21 → PVM1, 9 → PVM2, 5 → PVM3; ' +
      '0 % has none, as its code depends on the kind of supply)',
  })
  taxCodes: IsafTaxCodeView[];
  @ApiProperty({ description: 'false while the defaults apply' }) configured: boolean;
}
