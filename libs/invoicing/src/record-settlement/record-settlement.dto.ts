import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsObject,
  IsOptional,
  IsUUID,
  Matches,
  registerDecorator,
  ValidateNested,
  type ValidationArguments,
  type ValidationOptions,
} from 'class-validator';
import { commandMetadataOf, type Metadata, MetadataProperty } from '@ledgerkey/database';
import { IsDateTime, normalizeDateTime } from '@ledgerkey/documents';
import { IsMoneyCurrency, MinorUnits } from '@ledgerkey/money';

export const MAX_SETTLEMENT_ALLOCATIONS = 100;
export const MAX_SETTLEMENT_FEE = 1_000_000_000_000;
export const MAX_ALLOCATION_AMOUNT = 1_000_000_000_000_000;

export class SettlementAllocationDto {
  @ApiProperty({ format: 'uuid', description: 'A sales invoice of your company' })
  // Ids are case-insensitive: one spelling, so a repeated invoice and the fingerprint see one value.
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value))
  @IsUUID('all', { message: 'invoiceId must be an invoice id returned by this API' })
  invoiceId: string;

  @ApiProperty({
    example: 12100,
    minimum: 1,
    maximum: MAX_ALLOCATION_AMOUNT,
    description:
      'What the payout pays of this invoice, as an integer number of the currency minor unit (12100 = ' +
      '121.00 EUR); at most the invoice outstanding amount. A decimal such as 121.00 is refused.',
  })
  @MinorUnits({ min: 1, max: MAX_ALLOCATION_AMOUNT })
  amount: number;
}

function isAllocationList(value: unknown): value is Array<Partial<SettlementAllocationDto>> {
  return Array.isArray(value) && value.every((item) => typeof item === 'object' && item !== null);
}

/** Each invoice at most once per settlement (its allocation is one amount). */
function HasDistinctInvoices(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'hasDistinctInvoices',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: '$property must name each invoiceId at most once', ...options },
      validator: {
        validate(value: unknown): boolean {
          // Shape errors are reported by the array and nested validators.
          if (!isAllocationList(value)) return true;
          const ids = value.map((allocation) => allocation.invoiceId).filter((id) => typeof id === 'string');
          return new Set(ids).size === ids.length;
        },
      },
    });
}

/** The provider cannot keep more than it collected: feeAmount ≤ the sum of the allocations. */
function IsWithinAllocatedTotal(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isWithinAllocatedTotal',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: '$property must not exceed the sum of the allocation amounts', ...options },
      validator: {
        validate(value: unknown, args: ValidationArguments): boolean {
          const allocations = (args.object as { allocations?: unknown }).allocations;
          // Decided only on well-formed input; other validators report the rest.
          if (!Number.isSafeInteger(value) || !isAllocationList(allocations)) return true;
          const amounts = allocations.map((allocation) => allocation.amount);
          if (!amounts.every((amount) => Number.isSafeInteger(amount))) return true;
          // bigint: 100 allocations of up to 10^15 can exceed Number.MAX_SAFE_INTEGER.
          const allocatedTotal = amounts.reduce((sum, amount) => sum + BigInt(amount as number), 0n);
          return BigInt(value as number) <= allocatedTotal;
        },
      },
    });
}

export class RecordSettlementDto {
  @ApiProperty({
    example: 'po_1NxY',
    minLength: 1,
    maxLength: 255,
    description:
      "The payment provider's payout id (1–255 visible ASCII characters). At most one settlement per " +
      'payout, for ever (409 payout_already_settled).',
  })
  @Matches(/^[\x21-\x7E]{1,255}$/, { message: 'payoutId must be 1–255 visible ASCII characters (no spaces)' })
  payoutId: string;

  @ApiProperty({ example: 'EUR', description: 'ISO 4217; every allocated invoice must be in this currency' })
  @IsMoneyCurrency()
  currency: string;

  @ApiProperty({
    example: '2026-11-30T10:00:00Z',
    format: 'date-time',
    description: 'When the provider paid out: RFC 3339 with an offset, at most millisecond precision',
  })
  @IsDateTime()
  paidAt: string;

  @ApiPropertyOptional({
    example: 150,
    default: 0,
    minimum: 0,
    maximum: MAX_SETTLEMENT_FEE,
    description:
      'What the provider kept, as an integer number of the currency minor unit (150 = 1.50 EUR); at most ' +
      'the sum of the allocations. A decimal such as 1.50 is refused.',
  })
  @IsOptional()
  @MinorUnits({ min: 0, max: MAX_SETTLEMENT_FEE })
  @IsWithinAllocatedTotal()
  feeAmount?: number;

  @ApiProperty({
    type: [SettlementAllocationDto],
    minItems: 1,
    maxItems: MAX_SETTLEMENT_ALLOCATIONS,
    description: 'What the payout pays, per invoice; each invoice at most once',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_SETTLEMENT_ALLOCATIONS)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => SettlementAllocationDto)
  @HasDistinctInvoices()
  allocations: SettlementAllocationDto[];

  @MetadataProperty()
  metadata?: Metadata;

  /**
   * The request as the fingerprint sees it: fee defaulted, the payout instant in UTC, the
   * allocations in invoice id order. `…T12:00:00+02:00` and `…T10:00:00Z` are one payload, and
   * so are the same allocations listed in another order.
   */
  fingerprintPayload(company: unknown): unknown {
    return toRecordSettlementCommand(this, company as SettlingCompany);
  }
}

export interface SettlingCompany {
  id: string;
}

export interface RecordSettlementCommand {
  companyId: string;
  payoutId: string;
  currency: string;
  /** UTC, milliseconds: `2026-11-30T10:00:00.000Z` */
  paidAt: string;
  feeAmount: number;
  /** Sorted by invoiceId (lower case), the order invoices are locked and shown in. */
  allocations: Array<{ invoiceId: string; amount: number }>;
  /** Absent when empty (see commandMetadataOf). */
  metadata?: Metadata;
}

/** The validated request with defaults applied and representation made canonical. */
export function toRecordSettlementCommand(
  dto: RecordSettlementDto,
  company: SettlingCompany,
): RecordSettlementCommand {
  const paidAt = normalizeDateTime(dto.paidAt);
  if (paidAt === null) throw new Error(`paidAt was not validated: ${String(dto.paidAt)}`);
  return {
    companyId: company.id,
    payoutId: dto.payoutId,
    currency: dto.currency,
    paidAt,
    feeAmount: dto.feeAmount ?? 0,
    allocations: dto.allocations
      .map((allocation) => ({ invoiceId: allocation.invoiceId, amount: allocation.amount }))
      .sort((a, b) => (a.invoiceId < b.invoiceId ? -1 : a.invoiceId > b.invoiceId ? 1 : 0)),
    metadata: commandMetadataOf(dto.metadata),
  };
}
