/**
 * Whether `year`-`month`-`day` (month 1 to 12) is a day the calendar has: 2026-02-30 is
 * not, though `Date.parse` rolls it over into March. The proleptic Gregorian calendar of
 * RFC 3339, years 0000 to 9999 included (`Date.UTC` would read 0000 to 0099 as 1900 to 1999).
 *
 * @example isCalendarDay(2028, 2, 29) // true
 * @example isCalendarDay(2026, 2, 30) // false
 */
export function isCalendarDay(year: number, month: number, day: number): boolean {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
