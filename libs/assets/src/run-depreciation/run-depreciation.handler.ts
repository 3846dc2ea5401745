import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import { depreciationPosting, JournalRepository } from '@ledgerkey/ledger';
import { lastDayOf } from '../accounting-month';
import { DepreciationAlreadyRunError } from '../assets.errors';
import type { DepreciationRunView } from '../depreciation-runs/depreciation-run.view';
import {
  type DepreciationCharge,
  DepreciationRunsRepository,
} from '../depreciation-runs/depreciation-runs.repository';
import { FixedAssetsRepository } from '../fixed-assets/fixed-assets.repository';
import { depreciationIn } from '../straight-line';
import type { RunDepreciationDto } from './run-depreciation.dto';

@Injectable()
export class RunDepreciationHandler {
  constructor(
    private readonly runs: DepreciationRunsRepository,
    private readonly assets: FixedAssetsRepository,
    private readonly journal: JournalRepository,
  ) {}

  /**
   * Depreciates the period: one charge and one balanced journal entry (debit depreciation
   * expense, credit accumulated depreciation, dated the period's last day) per asset whose useful
   * life includes the period, all in one transaction. A period is depreciated once, for ever:
   * unique per (company, period) and per (company, asset, period).
   * @throws DepreciationAlreadyRunError when the period already has a run (also one committed by
   *   a concurrent call)
   */
  @Transactional()
  async execute(
    company: { id: string; currency: string },
    dto: RunDepreciationDto,
    now = new Date(),
  ): Promise<DepreciationRunView> {
    // Concurrent runs of the company queue here; the second one then finds the first's run.
    await this.runs.lockDepreciation(company.id);
    await this.assertNotRun(company.id, dto.period);

    const charges: DepreciationCharge[] = [];
    const assets = await this.assets.activeIn(company.id, dto.period);
    for (const asset of assets) {
      const month = depreciationIn(asset, dto.period);
      if (month === null || month.amount === 0) continue;
      charges.push({ id: randomUUID(), assetId: asset.id, period: dto.period, ...month });
    }
    const run: DepreciationRunView = {
      id: randomUUID(),
      object: 'depreciation_run',
      period: dto.period,
      currency: company.currency,
      totalAmount: charges.reduce((sum, charge) => sum + charge.amount, 0),
      charges: charges.map(({ id, assetId, monthNumber, amount }) => ({ id, assetId, monthNumber, amount })),
      createdAt: now.toISOString(),
    };
    if (!(await this.runs.insert(company.id, run, charges))) {
      await this.assertNotRun(company.id, dto.period);
      throw new Error('depreciation run insert reported a conflict but no run holds the period');
    }
    const assetById = new Map(assets.map((asset) => [asset.id, asset]));
    for (const charge of charges) {
      const asset = assetById.get(charge.assetId);
      await this.journal.post({
        companyId: company.id,
        currency: asset?.currency ?? company.currency,
        sourceType: 'depreciation_charge',
        sourceId: charge.id,
        memo: `Depreciation ${dto.period} of ${asset?.name ?? charge.assetId} (month ${charge.monthNumber})`,
        postedAt: now,
        entryDate: lastDayOf(dto.period),
        lines: depreciationPosting(charge),
      });
    }
    return run;
  }

  private async assertNotRun(companyId: string, period: string): Promise<void> {
    const existingRunId = await this.runs.findIdByPeriod(companyId, period);
    if (existingRunId !== null) throw new DepreciationAlreadyRunError(period, existingRunId);
  }
}
