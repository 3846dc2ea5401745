import { registerDecorator, type ValidationOptions } from 'class-validator';

/**
 * RFC 3339 (the ISO 8601 profile OpenAPI calls `date-time`): date, time with seconds, at most
 * millisecond precision, and an explicit offset. Local times without an offset are ambiguous
 * and refused.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/i;

const EARLIEST = Date.UTC(1900, 0, 1);
const LATEST = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The instant a date-time names, normalized to UTC with milliseconds
 * (`2026-11-30T12:00:00+02:00` → `2026-11-30T10:00:00.000Z`), or null when the value is not a
 * real date-time with an offset (no 2026-02-30, no 24:00, no leap second) between 1900 and 9999.
 */
export function normalizeDateTime(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = DATE_TIME.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number);
  const millis = Number((match[7] ?? '').padEnd(3, '0'));
  const local = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millis));
  const real =
    local.getUTCFullYear() === year &&
    local.getUTCMonth() === month - 1 &&
    local.getUTCDate() === day &&
    local.getUTCHours() === hour &&
    local.getUTCMinutes() === minute &&
    local.getUTCSeconds() === second;
  if (!real) return null;
  let offsetMinutes = 0;
  if (match[8] === undefined) {
    const [offsetHours, offsetMins] = [Number(match[10]), Number(match[11])];
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const instant = local.getTime() - offsetMinutes * 60_000;
  if (instant < EARLIEST || instant > LATEST) return null;
  return new Date(instant).toISOString();
}

/** Validates an RFC 3339 date-time with an offset, e.g. `2026-11-30T10:00:00Z`. */
export function IsDateTime(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isDateTime',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message:
          '$property must be a date-time with seconds and a timezone offset, e.g. 2026-11-30T10:00:00Z ' +
          '(at most 3 fractional digits)',
        ...options,
      },
      validator: { validate: (value: unknown) => normalizeDateTime(value) !== null },
    });
}
