/**
 * Calendar months written YYYY-MM, the unit of depreciation. Stored as the first day of the
 * month (a `date`).
 */
export const ACCOUNTING_MONTH = /^(19[0-9]{2}|2[0-9]{3})-(0[1-9]|1[0-2])$/;

/** Months since year 0: a number to do month arithmetic on. */
export function monthIndex(month: string): number {
  const [year, monthNumber] = month.split('-').map(Number);
  return year * 12 + (monthNumber - 1);
}

/** The month `index` (see monthIndex) as YYYY-MM. */
export function monthOfIndex(index: number): string {
  const year = Math.floor(index / 12);
  const monthNumber = (index % 12) + 1;
  return `${String(year).padStart(4, '0')}-${String(monthNumber).padStart(2, '0')}`;
}

/** The month's first day, as it is stored. */
export function firstDayOf(month: string): string {
  return `${month}-01`;
}

/** The month's last day: the date of the entries a depreciation run posts. */
export function lastDayOf(month: string): string {
  const [year, monthNumber] = month.split('-').map(Number);
  const day = new Date(Date.UTC(year, monthNumber, 0)).getUTCDate();
  return `${month}-${String(day).padStart(2, '0')}`;
}
