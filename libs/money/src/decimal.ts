/**
 * Exact, non-negative decimal-string arithmetic on bigint. No floating point anywhere.
 */

/** An exact decimal: value = units / 10^scale. `scale` is a non-negative integer. */
export interface DecimalValue {
  readonly units: bigint;
  readonly scale: number;
}

const MAX_DECIMAL_TEXT_LENGTH = 40;
// ASCII digits only (no sign, exponent, whitespace or bare '.'), spelled out on purpose.
const DECIMAL_PATTERN = /^([0-9]+)(?:\.([0-9]+))?$/;

function assertScale(scale: number, name: string): void {
  if (!Number.isSafeInteger(scale) || scale < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${scale}`);
  }
}

function pow10(exponent: number): bigint {
  return 10n ** BigInt(exponent);
}

/** numerator / denominator rounded half away from zero; denominator must be > 0. */
function divideRoundHalfAwayFromZero(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < 0n;
  const magnitude = negative ? -numerator : numerator;
  let quotient = magnitude / denominator;
  if ((magnitude % denominator) * 2n >= denominator) {
    quotient += 1n;
  }
  return negative ? -quotient : quotient;
}

/**
 * Parses a plain decimal string (`/^\d+(\.\d+)?$/`, ASCII digits, at most 40 characters).
 * Trailing fractional zeros are dropped before the scale check, so "1.23450" fits maxScale 4.
 * Leading integer zeros are allowed ("02.50").
 * @returns the exact value, or null if the text is malformed, too long or has more than
 *   `maxScale` significant decimals.
 * @throws RangeError if `maxScale` is not a non-negative integer.
 */
export function parseDecimal(text: string, maxScale: number): DecimalValue | null {
  assertScale(maxScale, 'maxScale');
  if (typeof text !== 'string' || text.length > MAX_DECIMAL_TEXT_LENGTH) {
    return null;
  }
  const match = DECIMAL_PATTERN.exec(text);
  if (match === null) {
    return null;
  }
  const integerDigits = match[1];
  const fractionDigits = (match[2] ?? '').replace(/0+$/, '');
  if (fractionDigits.length > maxScale) {
    return null;
  }
  return { units: BigInt(integerDigits + fractionDigits), scale: fractionDigits.length };
}

/**
 * Canonical text of a decimal: no trailing fractional zeros, no trailing '.', no leading zeros
 * except a single "0" before the point ("2.50" → "2.5", "002" → "2", "0.10" → "0.1").
 * @throws RangeError if `value.scale` is not a non-negative integer.
 */
export function formatDecimal(value: DecimalValue): string {
  assertScale(value.scale, 'scale');
  let { units, scale } = value;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const sign = negative ? '-' : '';
  if (scale === 0) {
    return sign + digits;
  }
  const split = digits.length - scale;
  return `${sign}${digits.slice(0, split)}.${digits.slice(split)}`;
}

/**
 * Parses then formats: the canonical form of `text`, or null when `parseDecimal` rejects it.
 * @throws RangeError if `maxScale` is not a non-negative integer.
 */
export function normalizeDecimal(text: string, maxScale: number): string | null {
  const value = parseDecimal(text, maxScale);
  return value === null ? null : formatDecimal(value);
}

/**
 * Numeric comparison regardless of scale ("21" equals "21.00").
 * @returns -1 if a < b, 0 if equal, 1 if a > b.
 * @throws RangeError if a scale is not a non-negative integer.
 */
export function compareDecimal(a: DecimalValue, b: DecimalValue): number {
  assertScale(a.scale, 'scale');
  assertScale(b.scale, 'scale');
  const scale = Math.max(a.scale, b.scale);
  const left = a.units * pow10(scale - a.scale);
  const right = b.units * pow10(scale - b.scale);
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * quantity × unitPrice, rounded half away from zero to a whole minor unit.
 * @throws RangeError if `quantity.scale` is not a non-negative integer.
 */
export function multiplyToMinorUnits(quantity: DecimalValue, unitPrice: bigint): bigint {
  assertScale(quantity.scale, 'scale');
  return divideRoundHalfAwayFromZero(quantity.units * unitPrice, pow10(quantity.scale));
}

/**
 * amount × ratePercent / 100, rounded half away from zero (-0.5 → -1, 0.5 → 1).
 * @throws RangeError if `ratePercent.scale` is not a non-negative integer.
 */
export function percentOf(amount: bigint, ratePercent: DecimalValue): bigint {
  assertScale(ratePercent.scale, 'scale');
  return divideRoundHalfAwayFromZero(amount * ratePercent.units, 100n * pow10(ratePercent.scale));
}

/**
 * A PostgreSQL numeric as the API writes it: `numeric(20,4)` comes back as "2.0000", the API
 * speaks "2".
 * @throws Error when the text is not an unsigned decimal (a programming mistake)
 */
export function canonicalNumeric(numeric: string): string {
  const parsed = parseDecimal(numeric, 20);
  if (!parsed) throw new Error(`unexpected numeric ${numeric}`);
  return formatDecimal(parsed);
}
