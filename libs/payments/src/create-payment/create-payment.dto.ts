import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsUUID, Matches } from 'class-validator';
import { commandMetadataOf, type Metadata, MetadataProperty } from '@ledgerkey/database';
import { IsMoneyCurrency, MinorUnits } from '@ledgerkey/money';

export const MAX_PAYMENT_AMOUNT = 1_000_000_000_000_000;

export class CreatePaymentDto {
  @ApiProperty({ format: 'uuid', description: 'A sales invoice of your company' })
  // Ids are case-insensitive: one spelling, so the fingerprint sees one value.
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value))
  @IsUUID('all', { message: 'invoiceId must be an invoice id returned by this API' })
  invoiceId: string;

  @ApiPropertyOptional({
    example: 12100,
    minimum: 1,
    maximum: MAX_PAYMENT_AMOUNT,
    description:
      "An integer number of the invoice currency's minor unit (12100 = 121.00 EUR; a decimal such as " +
      '121.00 is refused). Default: the whole outstanding amount (gross − credited − paid − payments of ' +
      'the invoice still processing), as of the first execution.',
  })
  @IsOptional()
  @MinorUnits({ min: 1, max: MAX_PAYMENT_AMOUNT })
  amount?: number;

  @ApiPropertyOptional({
    example: 'EUR',
    description: "Optional check: must be the invoice's currency (else 422 `currency_mismatch`)",
  })
  @IsOptional()
  @IsMoneyCurrency()
  currency?: string;

  @ApiProperty({
    example: 'pm_card_visa',
    minLength: 1,
    maxLength: 255,
    description:
      "The customer's payment method at the provider (1–255 visible ASCII). The provider sandbox knows " +
      '`pm_card_visa`, `pm_card_declined`, `pm_card_timeout`, `pm_card_error` and `pm_card_lost_response`.',
  })
  @Matches(/^[\x21-\x7E]{1,255}$/, { message: 'paymentMethod must be 1–255 visible ASCII characters' })
  paymentMethod: string;

  @MetadataProperty()
  metadata?: Metadata;

  /**
   * The request as the fingerprint sees it. An omitted amount stays omitted ("whatever is
   * outstanding at the first execution"), like an omitted issue date: a retry replays.
   */
  fingerprintPayload(): unknown {
    return toCreatePaymentCommand(this);
  }
}

export interface CreatePaymentCommand {
  invoiceId: string;
  amount: number | null;
  currency: string | null;
  paymentMethod: string;
  /** Absent when empty (see commandMetadataOf). */
  metadata?: Metadata;
}

export function toCreatePaymentCommand(dto: CreatePaymentDto): CreatePaymentCommand {
  return {
    invoiceId: dto.invoiceId,
    amount: dto.amount ?? null,
    currency: dto.currency ?? null,
    paymentMethod: dto.paymentMethod,
    metadata: commandMetadataOf(dto.metadata),
  };
}
