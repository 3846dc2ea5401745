export { formatMinorUnits, IsMoneyCurrency, minorUnitDigits } from './currency';
export { canonicalNumeric, parseDecimal } from './decimal';
export type { DecimalValue } from './decimal';
export { IsDecimalString } from './decimal-string.validator';
export { describeMinorUnits, MinorUnits, noteJsonNumberSource } from './minor-units.validator';
export {
  AmountOutOfRangeError,
  computeDocumentTotals,
  MAX_QUANTITY_SCALE,
  MAX_UNIT_PRICE,
  MAX_VAT_RATE_SCALE,
} from './vat';
export type { VatBreakdownRow } from './vat';
