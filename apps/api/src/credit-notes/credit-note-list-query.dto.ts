import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsUUID } from 'class-validator';
import type { CreditNoteListFilter } from '@ledgerkey/invoicing';
import { ListQueryDto, lowerCase } from '../list-query.dto';

/** `GET /v1/sales/credit-notes`: pagination plus filters. */
export class CreditNoteListQueryDto extends ListQueryDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'Only the credit notes of this invoice' })
  @IsOptional()
  @Transform(lowerCase)
  @IsUUID('all', { message: 'invoiceId must be an invoice id returned by this API' })
  invoiceId?: string;

  override filter(): CreditNoteListFilter {
    return { invoiceId: this.invoiceId };
  }
}
