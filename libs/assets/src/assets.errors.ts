/** Business outcomes of fixed assets and depreciation. Each has a stable `code`. */

export class DepreciationAlreadyRunError extends Error {
  readonly code = 'depreciation_already_run';
  constructor(
    readonly period: string,
    readonly existingRunId: string,
  ) {
    super(`Period ${period} was already depreciated by run ${existingRunId}.`);
  }
}

export class AssetPeriodClosedError extends Error {
  readonly code = 'asset_period_closed';
  constructor(lastRunPeriod: string) {
    super(
      `Depreciation has been run up to ${lastRunPeriod}: an asset created now starts after it, ` +
        'so that no month of its life is skipped.',
    );
  }
}

export class AssetNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(assetId: string) {
    super(`No asset ${assetId} exists.`);
  }
}

export class DepreciationRunNotFoundError extends Error {
  readonly code = 'not_found';
  constructor(runId: string) {
    super(`No depreciation run ${runId} exists.`);
  }
}
