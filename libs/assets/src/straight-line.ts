import { monthIndex, monthOfIndex } from './accounting-month';

/** What straight-line depreciation needs of an asset. Amounts in minor units. */
export interface DepreciableAsset {
  cost: number;
  residualValue: number;
  usefulLifeMonths: number;
  /** YYYY-MM: the first month depreciated, with a full month's amount (no partial months). */
  startMonth: string;
}

/** The amount every month but the last: the depreciable amount divided by the months, rounded down. */
export function monthlyDepreciation(asset: DepreciableAsset): number {
  return Math.floor((asset.cost - asset.residualValue) / asset.usefulLifeMonths);
}

/** The asset's last depreciated month, YYYY-MM. */
export function endMonth(asset: DepreciableAsset): string {
  return monthOfIndex(monthIndex(asset.startMonth) + asset.usefulLifeMonths - 1);
}

/**
 * The asset's depreciation in `month`: which month of its life it is (1 = the start month) and
 * the amount. Every month but the last depreciates `monthlyDepreciation`; the last takes the
 * rounding remainder, so the months add up to exactly cost − residual value.
 * @returns null when the asset is not depreciated in that month (before its start, after its life)
 */
export function depreciationIn(
  asset: DepreciableAsset,
  month: string,
): { monthNumber: number; amount: number } | null {
  const monthNumber = monthIndex(month) - monthIndex(asset.startMonth) + 1;
  if (monthNumber < 1 || monthNumber > asset.usefulLifeMonths) return null;
  const monthly = monthlyDepreciation(asset);
  const amount =
    monthNumber < asset.usefulLifeMonths
      ? monthly
      : asset.cost - asset.residualValue - monthly * (asset.usefulLifeMonths - 1);
  return { monthNumber, amount };
}
