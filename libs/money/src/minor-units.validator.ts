import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationOptions } from 'class-validator';

/**
 * Numbers written in a JSON body with a decimal point and no exponent ("50.00", "5000.0"): by the
 * object that holds them and their key. JSON.parse reads `50.00` as 50, so without this a price
 * meant as 50 euros would pass as 50 cents. Filled by the JSON body parser's reviver
 * (`noteJsonNumberSource`), read by `@MinorUnits()`; entries go with their objects (weak keys).
 */
const decimalNotation = new WeakMap<object, Map<string, string>>();

/** A decimal amount as people write one. Exponent notation (`5e3`, `5.0e3`) is a machine's spelling of a number. */
const DECIMAL_NOTATION = /^-?\d+\.\d*$/;

/**
 * For a JSON.parse reviver (Node ≥ 21 passes `context.source`, the number's text): remembers a
 * number written as a decimal. Cheap for everything else.
 */
export function noteJsonNumberSource(holder: unknown, key: string, value: unknown, source?: string): void {
  if (typeof value !== 'number' || source === undefined || !DECIMAL_NOTATION.test(source)) return;
  if (typeof holder !== 'object' || holder === null) return;
  let sources = decimalNotation.get(holder);
  if (!sources) decimalNotation.set(holder, (sources = new Map()));
  sources.set(key, source);
}

/** A minor-unit field's value as sent, when it was not an integer literal. */
class WrittenAsDecimal {
  constructor(readonly source: string) {}
}

export interface MinorUnitsRule {
  min: number;
  max: number;
}

/**
 * An amount of money as an integer count of the currency's minor unit (cents for EUR: 5000 is
 * 50.00 EUR), from `min` to `max`. Refused, with a message that says minor units: a fraction
 * (`50.5`), a string, and also a whole number written with a decimal point (`50.00`, `5000.0`),
 * whose writer meant a decimal amount — 50 euros, not 50 cents. Exponent notation of an integer
 * (`5e3`, `5.0e3`) is another spelling of that integer (number formatting never changes a request).
 */
export function MinorUnits(rule: MinorUnitsRule, options?: ValidationOptions): PropertyDecorator {
  const range = `from ${rule.min} to ${rule.max}`;
  return (target: object, propertyName: string | symbol) => {
    Transform(({ value, key, obj }: { value: unknown; key: string; obj: unknown }) => {
      const source =
        typeof value === 'number' && typeof obj === 'object' && obj !== null
          ? decimalNotation.get(obj)?.get(key)
          : undefined;
      return source === undefined ? value : new WrittenAsDecimal(source);
    })(target, propertyName);
    registerDecorator({
      name: 'minorUnits',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: ({ value }) =>
          value instanceof WrittenAsDecimal
            ? `$property must be an integer number of minor units (cents: 5000 is 50.00 EUR), written without a ` +
              `decimal point; got ${value.source.slice(0, 40)}`
            : `$property must be an integer number of minor units (cents: 5000 is 50.00 EUR), ${range}`,
        ...options,
      },
      validator: {
        validate(value: unknown): boolean {
          return (
            Number.isSafeInteger(value) && (value as number) >= rule.min && (value as number) <= rule.max
          );
        },
      },
    });
  };
}

/** `12100` → `121.00`: an example amount in words, for a currency with two decimals (EUR). */
function inMajorUnits(minor: number): string {
  const sign = minor < 0 ? '−' : '';
  const cents = Math.abs(minor);
  return `${sign}${Math.trunc(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/**
 * The OpenAPI description of an amount: what it is, then the unit in words with the example read
 * out ("12100 = 121.00 EUR"), so nobody has to guess whether 5000 means 50 or 5000 euros.
 */
export function describeMinorUnits(example: number, what?: string): string {
  const unit =
    `An integer number of the currency minor unit (cents for EUR): ${example} = ` +
    `${inMajorUnits(example)} EUR.`;
  return what ? `${what}. ${unit}` : unit;
}
