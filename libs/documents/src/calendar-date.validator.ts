import { registerDecorator, type ValidationOptions } from 'class-validator';

const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date written YYYY-MM-DD (2026-02-30 is not one). */
export function isCalendarDate(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const match = CALENDAR_DATE.exec(value);
  if (!match) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value) && Number(match[1]) >= 1900;
}

export function IsCalendarDate(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isCalendarDate',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: '$property must be a calendar date in the form YYYY-MM-DD', ...options },
      validator: { validate: isCalendarDate },
    });
}

/** Today's date in UTC, YYYY-MM-DD. */
export function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}
