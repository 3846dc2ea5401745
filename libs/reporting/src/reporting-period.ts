import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';

/** The validated date range [from, to] of a report, both days included. */
export interface ReportingPeriod {
  from: string;
  to: string;
}

/**
 * A date (YYYY-MM-DD) not before the property `other` of the same object; compared as text,
 * which orders calendar dates. Skipped while `other` is not a date string (its own validator
 * reports it).
 */
export function IsNotBefore(other: string, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isNotBefore',
      target: target.constructor,
      propertyName: propertyName as string,
      constraints: [other],
      options: { message: `$property must not be before ${other}`, ...options },
      validator: {
        validate(value: unknown, args: ValidationArguments): boolean {
          const start = (args.object as Record<string, unknown>)[other];
          if (typeof start !== 'string' || typeof value !== 'string') return true;
          return value >= start;
        },
      },
    });
}
