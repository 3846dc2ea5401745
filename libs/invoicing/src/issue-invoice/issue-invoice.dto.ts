import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsEmail,
  IsInt,
  IsISO31661Alpha2,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  NotEquals,
  ValidateNested,
} from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';
import {
  IsDecimalString,
  IsMoneyCurrency,
  MAX_QUANTITY_SCALE,
  MAX_UNIT_PRICE,
  MAX_VAT_RATE_SCALE,
} from '@ledgerkey/money';
import { IsCalendarDate } from '../calendar-date.validator';
import { CREDIT_NOTE_SERIES } from '../numbering/document-number';

export const DEFAULT_INVOICE_SERIES = 'INV';
export const MAX_INVOICE_LINES = 500;
export const MAX_PARTY_NAME_LENGTH = 200;

export class PartyDto {
  @ApiProperty({ example: 'UAB Pirkėjas' })
  @IsString()
  @CodePointLength(1, MAX_PARTY_NAME_LENGTH)
  name: string;

  @ApiPropertyOptional({ example: 'LT100001234567', maxLength: 30 })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Z0-9]{2,30}$/, { message: 'vatId must be 2–30 upper-case letters and digits' })
  vatId?: string;

  @ApiProperty({ example: 'LT', description: 'ISO 3166-1 alpha-2, upper case' })
  @Matches(/^[A-Z]{2}$/, { message: 'countryCode must be two upper-case letters' })
  @IsISO31661Alpha2()
  countryCode: string;

  @ApiPropertyOptional({ example: 'Gedimino pr. 1, Vilnius' })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 500)
  address?: string;

  @ApiPropertyOptional({ example: 'ap@example.lt' })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 254)
  @IsEmail()
  email?: string;
}

export class InvoiceLineDto {
  @ApiProperty({ example: 'Consulting' })
  @IsString()
  @CodePointLength(1, 1000)
  description: string;

  @ApiProperty({
    example: '2',
    description: 'Decimal string, > 0, at most 4 decimals. "2" and "2.0" are the same quantity.',
  })
  @IsDecimalString({ maxScale: MAX_QUANTITY_SCALE, min: '0', exclusiveMin: true, max: '1000000000' })
  quantity: string;

  @ApiProperty({ example: 5000, description: 'Integer in the currency minor unit (cents), 0–10^12' })
  @IsInt()
  @Min(0)
  @Max(MAX_UNIT_PRICE)
  unitPrice: number;

  @ApiProperty({ example: '21', description: 'VAT percent as a decimal string, 0–100, at most 2 decimals' })
  @IsDecimalString({ maxScale: MAX_VAT_RATE_SCALE, min: '0', max: '100' })
  vatRate: string;
}

export class IssueInvoiceDto {
  @ApiPropertyOptional({
    example: 'order-1041',
    description:
      'Your order reference. At most one invoice per order, for ever (409 order_already_invoiced).',
  })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 100)
  orderId?: string;

  @ApiPropertyOptional({
    example: 'INV',
    default: DEFAULT_INVOICE_SERIES,
    pattern: '^[A-Z0-9]{1,10}$',
    description:
      'Numbers are gapless per (company, document type, series). `CN` is reserved for credit ' +
      'notes (400 validation_failed): a printed number never names an invoice and a credit note.',
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Z0-9]{1,10}$/, { message: 'series must be 1–10 upper-case letters or digits' })
  @NotEquals(CREDIT_NOTE_SERIES, {
    message: `series ${CREDIT_NOTE_SERIES} is reserved for credit notes; choose another series for invoices`,
  })
  series?: string;

  @ApiPropertyOptional({ example: 'EUR', description: 'ISO 4217; defaults to the company currency' })
  @IsOptional()
  @IsMoneyCurrency()
  currency?: string;

  @ApiPropertyOptional({
    example: '2026-11-30',
    format: 'date',
    description: 'Defaults to today (UTC), captured once',
  })
  @IsOptional()
  @IsCalendarDate()
  issueDate?: string;

  @ApiPropertyOptional({ example: '2026-12-30', format: 'date' })
  @IsOptional()
  @IsCalendarDate()
  dueDate?: string;

  @ApiProperty({ type: PartyDto })
  // ValidateNested skips undefined and accepts arrays: require a plain object first.
  @IsObject()
  @ValidateNested()
  @Type(() => PartyDto)
  customer: PartyDto;

  @ApiProperty({ type: [InvoiceLineDto], minItems: 1, maxItems: MAX_INVOICE_LINES })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_INVOICE_LINES)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => InvoiceLineDto)
  lines: InvoiceLineDto[];

  @ApiPropertyOptional({ example: 'Thank you for your business' })
  @IsOptional()
  @IsString()
  @CodePointLength(0, 2000)
  notes?: string;

  /**
   * The request as the fingerprint sees it: defaults filled in (series, the company's
   * currency), so omitting a default and sending it are one payload. `issueDate` stays
   * absent when omitted: its default is captured at the first execution, and a retry the
   * next day is still the same request.
   */
  fingerprintPayload(companyDefaults: unknown): unknown {
    return toIssueInvoiceCommand(this, companyDefaults as CompanyDefaults);
  }
}

export interface CompanyDefaults {
  id: string;
  currency: string;
}

export interface IssueInvoiceCommand {
  companyId: string;
  orderId: string | null;
  series: string;
  currency: string;
  /** null: today (UTC) at execution */
  issueDate: string | null;
  dueDate: string | null;
  customer: {
    name: string;
    vatId: string | null;
    countryCode: string;
    address: string | null;
    email: string | null;
  };
  lines: Array<{ description: string; quantity: string; unitPrice: number; vatRate: string }>;
  notes: string | null;
}

/** The validated request with every default applied (quantities and rates are canonical). */
export function toIssueInvoiceCommand(dto: IssueInvoiceDto, company: CompanyDefaults): IssueInvoiceCommand {
  return {
    companyId: company.id,
    orderId: dto.orderId ?? null,
    series: dto.series ?? DEFAULT_INVOICE_SERIES,
    currency: dto.currency ?? company.currency,
    issueDate: dto.issueDate ?? null,
    dueDate: dto.dueDate ?? null,
    customer: {
      name: dto.customer.name,
      vatId: dto.customer.vatId ?? null,
      countryCode: dto.customer.countryCode,
      address: dto.customer.address ?? null,
      email: dto.customer.email ?? null,
    },
    lines: dto.lines.map((line) => ({
      description: line.description,
      quantity: line.quantity,
      unitPrice: line.unitPrice,
      vatRate: line.vatRate,
    })),
    notes: dto.notes ?? null,
  };
}
