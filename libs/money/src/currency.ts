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
