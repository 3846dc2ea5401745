import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Transactional } from '@ledgerkey/database';
import { AssetPeriodClosedError } from '../assets.errors';
import { DepreciationRunsRepository } from '../depreciation-runs/depreciation-runs.repository';
import type { FixedAssetView } from '../fixed-assets/fixed-asset.view';
import {
  type FixedAsset,
  fixedAssetView,
  FixedAssetsRepository,
} from '../fixed-assets/fixed-assets.repository';
import type { CreateAssetDto } from './create-asset.dto';

@Injectable()
export class CreateAssetHandler {
  constructor(
    private readonly assets: FixedAssetsRepository,
    private readonly runs: DepreciationRunsRepository,
  ) {}

  /**
   * Records a fixed asset in the company currency. It posts nothing itself (its acquisition is a
   * purchase); depreciation runs post its months.
   * @throws AssetPeriodClosedError when `startMonth` is not after the last depreciated period
   */
  @Transactional()
  async execute(
    company: { id: string; currency: string },
    dto: CreateAssetDto,
    now = new Date(),
  ): Promise<FixedAssetView> {
    // Under the company's depreciation lock: no run can close the start month meanwhile.
    await this.runs.lockDepreciation(company.id);
    const lastPeriod = await this.runs.lastPeriod(company.id);
    if (lastPeriod !== null && dto.startMonth <= lastPeriod) throw new AssetPeriodClosedError(lastPeriod);
    const asset: FixedAsset = {
      id: randomUUID(),
      name: dto.name,
      currency: company.currency,
      cost: dto.cost,
      residualValue: dto.residualValue ?? 0,
      usefulLifeMonths: dto.usefulLifeMonths,
      startMonth: dto.startMonth,
      createdAt: now.toISOString(),
    };
    await this.assets.insert(company.id, asset);
    return fixedAssetView(asset, 0);
  }
}
