import { Injectable } from '@nestjs/common';
import {
  type Page,
  type PageRequest,
  Propagation,
  TenantReader,
  Transactional,
  TransactionHost,
  type PgTransactionalAdapter,
} from '@ledgerkey/database';
import { endMonth, monthlyDepreciation } from '../straight-line';
import type { FixedAssetView } from './fixed-asset.view';

/** An asset as it is stored: what creating it decides. */
export interface FixedAsset {
  id: string;
  name: string;
  currency: string;
  cost: number;
  residualValue: number;
  usefulLifeMonths: number;
  startMonth: string;
  createdAt: string;
}

interface AssetRow {
  id: string;
  name: string;
  currency: string;
  cost: string;
  residual_value: string;
  useful_life_months: number;
  start_month: string;
  created_at: Date;
  depreciated_total: string;
}

const SELECT_ASSET = `
  SELECT a.id, a.name, a.currency, a.cost, a.residual_value, a.useful_life_months,
         to_char(a.start_month, 'YYYY-MM') AS start_month, a.created_at,
         (SELECT coalesce(sum(d.amount), 0) FROM depreciation_charges d
           WHERE d.company_id = a.company_id AND d.asset_id = a.id) AS depreciated_total
    FROM fixed_assets a`;

function toAsset(row: AssetRow): FixedAsset {
  return {
    id: row.id,
    name: row.name,
    currency: row.currency,
    cost: Number(row.cost),
    residualValue: Number(row.residual_value),
    usefulLifeMonths: row.useful_life_months,
    startMonth: row.start_month,
    createdAt: row.created_at.toISOString(),
  };
}

/** The asset with what is derived from it and from its charges. */
export function fixedAssetView(asset: FixedAsset, depreciatedTotal: number): FixedAssetView {
  return {
    id: asset.id,
    object: 'asset',
    name: asset.name,
    currency: asset.currency,
    cost: asset.cost,
    residualValue: asset.residualValue,
    usefulLifeMonths: asset.usefulLifeMonths,
    startMonth: asset.startMonth,
    endMonth: endMonth(asset),
    monthlyDepreciation: monthlyDepreciation(asset),
    depreciatedTotal,
    bookValue: asset.cost - depreciatedTotal,
    createdAt: asset.createdAt,
  };
}

const toView = (row: AssetRow) => fixedAssetView(toAsset(row), Number(row.depreciated_total));

/** Keyset order (created_at, id): creation order. */
const ASSETS = new TenantReader('fixed_assets', 'a', SELECT_ASSET, ['created_at', 'id'], toView);

/** Fixed assets of one company. Every method takes the company id first. */
@Injectable()
export class FixedAssetsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  findById(companyId: string, assetId: string): Promise<FixedAssetView | null> {
    return ASSETS.findById(this.txHost.tx, companyId, assetId);
  }

  list(companyId: string, page: PageRequest): Promise<Page<FixedAssetView>> {
    return ASSETS.list(this.txHost.tx, companyId, page);
  }

  @Transactional(Propagation.Mandatory)
  async insert(companyId: string, asset: FixedAsset): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO fixed_assets (company_id, id, name, currency, cost, residual_value, useful_life_months,
                                 start_month, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::date, $9)`,
      [
        companyId,
        asset.id,
        asset.name,
        asset.currency,
        asset.cost,
        asset.residualValue,
        asset.usefulLifeMonths,
        `${asset.startMonth}-01`,
        asset.createdAt,
      ],
    );
  }

  /**
   * The assets depreciated in `month` (started, life not over) that have no charge for it yet,
   * in creation order.
   */
  @Transactional(Propagation.Mandatory)
  async activeIn(companyId: string, month: string): Promise<FixedAsset[]> {
    const rows = await this.txHost.tx.query<AssetRow>(
      `${SELECT_ASSET}
        WHERE a.company_id = $1
          AND a.start_month <= $2::date
          AND $2::date < a.start_month + make_interval(months => a.useful_life_months)
          AND NOT EXISTS (SELECT 1 FROM depreciation_charges d
                           WHERE d.company_id = a.company_id AND d.asset_id = a.id AND d.period = $2::date)
        ORDER BY a.created_at, a.id`,
      [companyId, `${month}-01`],
    );
    return rows.map(toAsset);
  }
}
