import { Injectable } from '@nestjs/common';
import {
  Propagation,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import type { IsafTaxCode } from './isaf-tax-codes';

/** A company's i.SAF settings (one row per company, absent while the defaults apply). */
@Injectable()
export class IsafSettingsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /** @returns the configured tax codes, or null when the company uses the defaults */
  async findTaxCodes(companyId: string): Promise<IsafTaxCode[] | null> {
    const rows = await this.txHost.tx.query<{ tax_codes: IsafTaxCode[] }>(
      `SELECT tax_codes FROM isaf_settings WHERE company_id = $1`,
      [companyId],
    );
    return rows[0]?.tax_codes.map(({ vatRate, taxCode }) => ({ vatRate, taxCode })) ?? null;
  }

  /** Replaces the company's mapping (upsert on its key: concurrent updates serialize on the row). */
  @Transactional(Propagation.Mandatory)
  async replaceTaxCodes(companyId: string, taxCodes: IsafTaxCode[], now: Date): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO isaf_settings (company_id, tax_codes, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (company_id) DO UPDATE SET tax_codes = EXCLUDED.tax_codes, updated_at = EXCLUDED.updated_at`,
      [companyId, JSON.stringify(taxCodes), now],
    );
  }
}
