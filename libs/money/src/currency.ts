import { isISO4217CurrencyCode, registerDecorator, type ValidationOptions } from 'class-validator';

/**
 * ISO 4217 codes that have no minor unit ("N.A." in the standard): precious metals, bond
 * market units, SDR, test and "no currency" codes. Amounts are integers in the minor unit, so
 * these cannot be invoiced.
 */
const WITHOUT_MINOR_UNIT = new Set([
  'XAG',
  'XAU',
  'XBA',
  'XBB',
  'XBC',
  'XBD',
  'XDR',
  'XPD',
  'XPT',
  'XSU',
  'XTS',
  'XUA',
  'XXX',
]);

/** True for an upper-case ISO 4217 code of a currency that has a minor unit. */
export function isMoneyCurrency(code: unknown): code is string {
  return (
    typeof code === 'string' &&
    /^[A-Z]{3}$/.test(code) &&
    isISO4217CurrencyCode(code) &&
    !WITHOUT_MINOR_UNIT.has(code)
  );
}

/** Validates an upper-case ISO 4217 currency with a minor unit (not XXX, XAU, XTS, …). */
export function IsMoneyCurrency(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isMoneyCurrency',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: '$property must be an upper-case ISO 4217 code of a currency with a minor unit',
        ...options,
      },
      validator: { validate: isMoneyCurrency },
    });
}

/**
 * ISO 4217 minor-unit digits of the currencies whose minor unit is not the hundredth. Every other
 * currency with a minor unit has two.
 */
const MINOR_UNIT_DIGITS: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** How many decimals the currency's minor unit has (ISO 4217): 2 for EUR, 0 for JPY, 3 for KWD. */
export function minorUnitDigits(currency: string): number {
  return MINOR_UNIT_DIGITS[currency] ?? 2;
}

/**
 * An amount of minor units as a decimal string of the currency's own unit with exactly `digits`
 * decimals (default: the currency's minor-unit digits): 12100 EUR → "121.00", 1000 JPY with
 * 2 → "1000.00". Exact (bigint), never through floating point.
 * @throws RangeError when `digits` is fewer than the currency's minor-unit digits (the amount
 *   would have to be rounded) or the amount is not a safe integer
 */
export function formatMinorUnits(
  amount: number,
  currency: string,
  digits = minorUnitDigits(currency),
): string {
  const own = minorUnitDigits(currency);
  if (!Number.isSafeInteger(amount)) throw new RangeError(`amount ${amount} is not a safe integer`);
  if (digits < own) throw new RangeError(`${currency} has ${own} decimals, cannot write it with ${digits}`);
  const scaled = BigInt(amount) * 10n ** BigInt(digits - own);
  const sign = scaled < 0n ? '-' : '';
  const magnitude = (scaled < 0n ? -scaled : scaled).toString().padStart(digits + 1, '0');
  if (digits === 0) return sign + magnitude;
  return `${sign}${magnitude.slice(0, -digits)}.${magnitude.slice(-digits)}`;
}
