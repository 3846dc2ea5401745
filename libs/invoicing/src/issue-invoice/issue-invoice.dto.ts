import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, Matches, NotEquals, ValidateNested } from 'class-validator';
import { CodePointLength, commandMetadataOf, type Metadata, MetadataProperty } from '@ledgerkey/database';
import {
  DocumentLines,
  InvoiceLineDto,
  IsCalendarDate,
  type LineInput,
  lineInputsOf,
  type Party,
  PartyDto,
  partyOf,
} from '@ledgerkey/documents';
import { IsMoneyCurrency } from '@ledgerkey/money';
import { CREDIT_NOTE_SERIES } from '../numbering/document-number';

export const DEFAULT_INVOICE_SERIES = 'INV';

export class IssueInvoiceDto {
  @ApiPropertyOptional({
    example: 'order-2001',
    description:
      'Your order reference. At most one invoice per order, for ever (409 order_already_invoiced): to ' +
      'issue another invoice from this example, change it too.',
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

  @DocumentLines()
  lines: InvoiceLineDto[];

  @ApiPropertyOptional({ example: 'Thank you for your business' })
  @IsOptional()
  @IsString()
  @CodePointLength(0, 2000)
  notes?: string;

  @MetadataProperty()
  metadata?: Metadata;

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
  customer: Party;
  lines: LineInput[];
  notes: string | null;
  /** Absent when empty (see commandMetadataOf). */
  metadata?: Metadata;
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
    customer: partyOf(dto.customer),
    lines: lineInputsOf(dto.lines),
    notes: dto.notes ?? null,
    metadata: commandMetadataOf(dto.metadata),
  };
}
