import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches } from 'class-validator';
import type { SettlementListFilter } from '@ledgerkey/invoicing';
import { ListQueryDto } from '../list-query.dto';

/** `GET /v1/settlements`: pagination plus filters. */
export class SettlementListQueryDto extends ListQueryDto {
  @ApiPropertyOptional({
    example: 'po_1NxY',
    description: 'The settlement of this provider payout (at most one)',
  })
  @IsOptional()
  @Matches(/^[\x21-\x7E]{1,255}$/, { message: 'payoutId must be 1–255 visible ASCII characters (no spaces)' })
  payoutId?: string;

  override filter(): SettlementListFilter {
    return { payoutId: this.payoutId };
  }
}
