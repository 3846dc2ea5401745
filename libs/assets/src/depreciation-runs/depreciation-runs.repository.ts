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
import type { DepreciationChargeView, DepreciationRunView } from './depreciation-run.view';

interface RunRow {
  id: string;
  period: string;
  currency: string;
  total_amount: string;
  created_at: Date;
  charges: Array<{ id: string; assetId: string; monthNumber: number; amount: string }>;
}

const SELECT_RUN = `
  SELECT r.id, to_char(r.period, 'YYYY-MM') AS period, r.currency, r.total_amount, r.created_at,
         coalesce((SELECT json_agg(json_build_object('id', d.id, 'assetId', d.asset_id,
                                                     'monthNumber', d.month_number, 'amount', d.amount::text)
                                   ORDER BY a.created_at, a.id)
                     FROM depreciation_charges d
                     JOIN fixed_assets a ON a.company_id = d.company_id AND a.id = d.asset_id
                    WHERE d.company_id = r.company_id AND d.run_id = r.id), '[]') AS charges
    FROM depreciation_runs r`;

function toView(row: RunRow): DepreciationRunView {
  return {
    id: row.id,
    object: 'depreciation_run',
    period: row.period,
    currency: row.currency,
    totalAmount: Number(row.total_amount),
    charges: row.charges.map((charge) => ({
      id: charge.id,
      assetId: charge.assetId,
      monthNumber: charge.monthNumber,
      amount: Number(charge.amount),
    })),
    createdAt: row.created_at.toISOString(),
  };
}

/** Keyset order (period, id): one run per period, so period order. */
const RUNS = new TenantReader('depreciation_runs', 'r', SELECT_RUN, ['period', 'id'], toView);

/** A charge as a run records it: the asset and month it depreciates. */
export interface DepreciationCharge extends DepreciationChargeView {
  period: string;
}

/** Depreciation runs and their charges, of one company. */
@Injectable()
export class DepreciationRunsRepository {
  constructor(private readonly txHost: TransactionHost<PgTransactionalAdapter>) {}

  /**
   * Serializes the company's depreciation runs and asset creations until COMMIT: a run sees
   * every asset created before it, and no asset can start in a month a concurrent run closes.
   * (Runs of one period would also be stopped by uq_depreciation_runs_company_period; the lock
   * makes the second one wait and find the first instead of failing on the index.)
   */
  @Transactional(Propagation.Mandatory)
  async lockDepreciation(companyId: string): Promise<void> {
    await this.txHost.tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('depreciation:' || $1, 0))`, [
      companyId,
    ]);
  }

  async findIdByPeriod(companyId: string, period: string): Promise<string | null> {
    const rows = await this.txHost.tx.query<{ id: string }>(
      `SELECT id FROM depreciation_runs WHERE company_id = $1 AND period = $2::date`,
      [companyId, `${period}-01`],
    );
    return rows[0]?.id ?? null;
  }

  /** The latest period depreciated, YYYY-MM, or null before the first run. */
  async lastPeriod(companyId: string): Promise<string | null> {
    const rows = await this.txHost.tx.query<{ period: string | null }>(
      `SELECT to_char(max(period), 'YYYY-MM') AS period FROM depreciation_runs WHERE company_id = $1`,
      [companyId],
    );
    return rows[0]?.period ?? null;
  }

  /**
   * Inserts the run and its charges in one statement. `ON CONFLICT DO NOTHING` on the period: a
   * run that lost a race inserts nothing (no charge either) and the caller reports the winner.
   * @returns false when the period already has a run
   */
  @Transactional(Propagation.Mandatory)
  async insert(companyId: string, run: DepreciationRunView, charges: DepreciationCharge[]): Promise<boolean> {
    const rows = await this.txHost.tx.query<{ inserted: number }>(
      `WITH run AS (
         INSERT INTO depreciation_runs (company_id, id, period, currency, total_amount, created_at)
         VALUES ($1, $2, $3::date, $4, $5, $6)
         ON CONFLICT (company_id, period) DO NOTHING
         RETURNING id
       ), charges AS (
         INSERT INTO depreciation_charges (company_id, id, run_id, asset_id, period, month_number, amount)
         SELECT $1, c.id, run.id, c.asset_id, $3::date, c.month_number, c.amount
           FROM run, unnest($7::uuid[], $8::uuid[], $9::int[], $10::bigint[]) AS c(id, asset_id, month_number, amount)
       )
       SELECT count(*)::int AS inserted FROM run`,
      [
        companyId,
        run.id,
        `${run.period}-01`,
        run.currency,
        run.totalAmount,
        run.createdAt,
        charges.map((charge) => charge.id),
        charges.map((charge) => charge.assetId),
        charges.map((charge) => charge.monthNumber),
        charges.map((charge) => charge.amount),
      ],
    );
    return rows[0].inserted === 1;
  }

  findById(companyId: string, runId: string): Promise<DepreciationRunView | null> {
    return RUNS.findById(this.txHost.tx, companyId, runId);
  }

  list(companyId: string, page: PageRequest): Promise<Page<DepreciationRunView>> {
    return RUNS.list(this.txHost.tx, companyId, page);
  }
}
