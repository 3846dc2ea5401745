import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { CodePointLength } from '@ledgerkey/database';
import { IsCalendarDate } from '@ledgerkey/documents';
import type { PurchaseInvoiceListFilter } from '@ledgerkey/purchasing';
import { IsNotBefore, ListQueryDto } from '../list-query.dto';

/** `GET /v1/purchases/invoices`: pagination plus filters; every filter given narrows the list (AND). */
export class PurchaseInvoiceListQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ example: 'LT100009876543', description: "Invoices of this supplier's VAT id" })
  @IsOptional()
  @Matches(/^[A-Z0-9]{2,30}$/, { message: 'supplierVatId must be 2–30 upper-case letters and digits' })
  supplierVatId?: string;

  @ApiPropertyOptional({
    example: 'SUP-2026-0042',
    description: "The supplier's invoice number, exactly as recorded",
  })
  @IsOptional()
  @IsString()
  @CodePointLength(1, 100)
  documentNumber?: string;

  @ApiPropertyOptional({ format: 'date', example: '2026-11-01', description: 'Issued on or after' })
  @IsOptional()
  @IsCalendarDate()
  issueDateFrom?: string;

  @ApiPropertyOptional({ format: 'date', example: '2026-11-30', description: 'Issued on or before' })
  @IsOptional()
  @IsCalendarDate()
  @IsNotBefore('issueDateFrom')
  issueDateTo?: string;

  override filter(): PurchaseInvoiceListFilter {
    const { supplierVatId, documentNumber, issueDateFrom, issueDateTo } = this;
    return { supplierVatId, documentNumber, issueDateFrom, issueDateTo };
  }
}
