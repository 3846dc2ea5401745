export { AssetsModule } from './assets.module';
export { CreateAssetDto } from './create-asset/create-asset.dto';
export { CreateAssetHandler } from './create-asset/create-asset.handler';
export { FixedAssetQueries } from './fixed-assets/fixed-asset-queries';
export { FixedAssetListView, FixedAssetView } from './fixed-assets/fixed-asset.view';
export { RunDepreciationDto } from './run-depreciation/run-depreciation.dto';
export { RunDepreciationHandler } from './run-depreciation/run-depreciation.handler';
export { DepreciationRunQueries } from './depreciation-runs/depreciation-run-queries';
export {
  DepreciationChargeView,
  DepreciationRunListView,
  DepreciationRunView,
} from './depreciation-runs/depreciation-run.view';
export {
  AssetNotFoundError,
  AssetPeriodClosedError,
  DepreciationAlreadyRunError,
  DepreciationRunNotFoundError,
} from './assets.errors';
