import { Module } from '@nestjs/common';
import { LedgerModule } from '@ledgerkey/ledger';
import { CreateAssetHandler } from './create-asset/create-asset.handler';
import { DepreciationRunQueries } from './depreciation-runs/depreciation-run-queries';
import { DepreciationRunsRepository } from './depreciation-runs/depreciation-runs.repository';
import { FixedAssetQueries } from './fixed-assets/fixed-asset-queries';
import { FixedAssetsRepository } from './fixed-assets/fixed-assets.repository';
import { RunDepreciationHandler } from './run-depreciation/run-depreciation.handler';

@Module({
  imports: [LedgerModule],
  providers: [
    FixedAssetsRepository,
    DepreciationRunsRepository,
    CreateAssetHandler,
    FixedAssetQueries,
    RunDepreciationHandler,
    DepreciationRunQueries,
  ],
  exports: [CreateAssetHandler, FixedAssetQueries, RunDepreciationHandler, DepreciationRunQueries],
})
export class AssetsModule {}
