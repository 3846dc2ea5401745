import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationOptions } from 'class-validator';
import { compareDecimal, normalizeDecimal, parseDecimal } from './decimal';

export interface DecimalStringRule {
  maxScale: number;
  /** Inclusive lower bound unless `exclusiveMin`. */
  min: string;
  exclusiveMin?: boolean;
  max: string;
}

/**
 * A decimal number sent as a JSON string ("2", "2.5", "0.0001"): no sign, no exponent, at most
 * `maxScale` decimals after trailing zeros are dropped, within [min, max]. Valid values are
 * rewritten to canonical form ("2.50" → "2.5"), so equal numbers fingerprint equally.
 */
export function IsDecimalString(rule: DecimalStringRule, options?: ValidationOptions): PropertyDecorator {
  const min = parseDecimal(rule.min, rule.maxScale);
  const max = parseDecimal(rule.max, rule.maxScale);
  if (!min || !max) throw new Error('invalid decimal bounds');
  const describe = `a decimal string with at most ${rule.maxScale} decimals, ${
    rule.exclusiveMin ? 'greater than' : 'at least'
  } ${rule.min} and at most ${rule.max}`;
  return (target: object, propertyName: string | symbol) => {
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' ? (normalizeDecimal(value, rule.maxScale) ?? value) : value,
    )(target, propertyName);
    registerDecorator({
      name: 'isDecimalString',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `$property must be ${describe}`, ...options },
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'string') return false;
          const parsed = parseDecimal(value, rule.maxScale);
          if (!parsed) return false;
          const low = compareDecimal(parsed, min);
          return (rule.exclusiveMin ? low > 0 : low >= 0) && compareDecimal(parsed, max) <= 0;
        },
      },
    });
  };
}
