import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsObject,
  IsOptional,
  IsString,
  registerDecorator,
  ValidateNested,
  type ValidationArguments,
  type ValidationOptions,
} from 'class-validator';
import {
  CodePointLength,
  codePointLength,
  commandMetadataOf,
  type Metadata,
  MetadataProperty,
} from '@ledgerkey/database';
import {
  DocumentLines,
  InvoiceLineDto,
  IsCalendarDate,
  type LineInput,
  lineInputsOf,
  MAX_PARTY_NAME_LENGTH,
  type Party,
  PartyDto,
  partyOf,
} from '@ledgerkey/documents';
import { IsMoneyCurrency } from '@ledgerkey/money';
import { normalizeDocumentNumber, normalizeSupplierName } from '../supplier-key';

export const MAX_DOCUMENT_NUMBER_LENGTH = 100;

// Control, format, surrogate, private-use and unassigned code points: nothing one can print.
const INVISIBLE = /\p{C}/u;
const VISIBLE = /[^\s\p{C}]/u;

function isDocumentNumber(value: unknown): boolean {
  if (typeof value !== 'string' || INVISIBLE.test(value) || !VISIBLE.test(value)) return false;
  // Upper-casing can lengthen ("ß" → "SS"); the stored, normalized form must fit as well.
  return (
    codePointLength(value) <= MAX_DOCUMENT_NUMBER_LENGTH &&
    codePointLength(normalizeDocumentNumber(value)) <= MAX_DOCUMENT_NUMBER_LENGTH
  );
}

/** The supplier's own invoice number: 1–100 printable characters, not only spaces. */
function IsDocumentNumber(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isDocumentNumber',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be 1–${MAX_DOCUMENT_NUMBER_LENGTH} printable characters (Unicode code points), not only spaces`,
        ...options,
      },
      validator: { validate: isDocumentNumber },
    });
}

/** Without a VAT id the name is the supplier's identity, so it must survive normalization. */
function IsIdentifyingSupplierName(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isIdentifyingSupplierName',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: '$property must contain more than punctuation and spaces when vatId is absent',
        ...options,
      },
      validator: {
        validate(value: unknown, args: ValidationArguments): boolean {
          // Like @IsOptional() on vatId, null counts as absent.
          if ((args.object as { vatId?: unknown }).vatId != null) return true;
          return typeof value === 'string' && normalizeSupplierName(value) !== '';
        },
      },
    });
}

/** The party that issued the invoice: a PartyDto whose name can identify it. */
export class SupplierDto extends PartyDto {}
// Applied to the inherited member rather than redeclaring it (a redeclared field would shadow
// PartyDto's own with an initializer). class-validator drops every inherited custom validator of a
// property once the subclass adds one of its own, so PartyDto's rules for name are stated again.
IsString()(SupplierDto.prototype, 'name');
CodePointLength(1, MAX_PARTY_NAME_LENGTH)(SupplierDto.prototype, 'name');
IsIdentifyingSupplierName()(SupplierDto.prototype, 'name');
ApiProperty({
  example: 'UAB Tiekėjas',
  description:
    'Identifies the supplier when vatId is absent on either of two documents: compared after ' +
    'NFKC, lower-casing, removing punctuation and collapsing spaces ("UAB  Tiekėjas," = ' +
    '"uab tiekėjas").',
})(SupplierDto.prototype, 'name');

export class RecordPurchaseInvoiceDto {
  @ApiProperty({
    example: 'TK-2026/0042',
    minLength: 1,
    maxLength: MAX_DOCUMENT_NUMBER_LENGTH,
    description:
      "The supplier's invoice number, echoed as sent. A supplier document is recorded once, for " +
      'ever: it duplicates an earlier purchase invoice of the company (409 ' +
      'purchase_invoice_duplicate with existingPurchaseInvoiceId) when the numbers match, ' +
      'compared upper-cased without spaces ("inv 001" = "INV001"), and either both suppliers ' +
      'have a vatId and they are equal, or at least one has none and the normalized names are ' +
      'equal. Two different VAT ids are two suppliers, whatever their names.',
  })
  @IsDocumentNumber()
  documentNumber: string;

  @ApiProperty({
    type: SupplierDto,
    description:
      'Identified by vatId; where one of two documents has no vatId, by the normalized name ' +
      '(the same supplier may be spelled differently on every upload). See documentNumber.',
  })
  // ValidateNested skips undefined and accepts arrays: require a plain object first.
  @IsObject()
  @ValidateNested()
  @Type(() => SupplierDto)
  supplier: SupplierDto;

  @ApiPropertyOptional({ example: 'EUR', description: 'ISO 4217; defaults to the company currency' })
  @IsOptional()
  @IsMoneyCurrency()
  currency?: string;

  @ApiProperty({ example: '2026-11-30', format: 'date', description: "The supplier's issue date" })
  @IsCalendarDate()
  issueDate: string;

  @ApiPropertyOptional({ example: '2026-12-30', format: 'date', description: 'On or after issueDate' })
  @IsOptional()
  @IsCalendarDate()
  dueDate?: string;

  @DocumentLines()
  lines: InvoiceLineDto[];

  @ApiPropertyOptional({ example: 'Office supplies, November' })
  @IsOptional()
  @IsString()
  @CodePointLength(0, 2000)
  notes?: string;

  @MetadataProperty()
  metadata?: Metadata;

  /**
   * The request as the fingerprint sees it: the company's currency filled in, so omitting it
   * and sending it are one payload. Supplier and document number stay as sent: they are
   * stored and echoed, so "inv 001" and "INV001" under one key are different requests.
   */
  fingerprintPayload(company: unknown): unknown {
    return toRecordPurchaseInvoiceCommand(this, company as PurchasingCompany);
  }
}

/** What recording needs to know about the authenticated company. */
export interface PurchasingCompany {
  id: string;
  currency: string;
}

export interface RecordPurchaseInvoiceCommand {
  companyId: string;
  documentNumber: string;
  supplier: Party;
  currency: string;
  issueDate: string;
  dueDate: string | null;
  lines: LineInput[];
  notes: string | null;
  /** Absent when empty (see commandMetadataOf). */
  metadata?: Metadata;
}

/** The validated request with every default applied (quantities and rates are canonical). */
export function toRecordPurchaseInvoiceCommand(
  dto: RecordPurchaseInvoiceDto,
  company: PurchasingCompany,
): RecordPurchaseInvoiceCommand {
  return {
    companyId: company.id,
    documentNumber: dto.documentNumber,
    supplier: partyOf(dto.supplier),
    currency: dto.currency ?? company.currency,
    issueDate: dto.issueDate,
    dueDate: dto.dueDate ?? null,
    lines: lineInputsOf(dto.lines),
    notes: dto.notes ?? null,
    metadata: commandMetadataOf(dto.metadata),
  };
}
