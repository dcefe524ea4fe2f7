const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** An HTTP date as RFC 9110 has it: IMF-fixdate, or its obsolete RFC 850 and asctime forms. */
const HTTP_DATE = new RegExp(
  `^(?:${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT|(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} ${TIME} GMT|${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4})$`,
);

/**
 * A `Retry-After` value (delay-seconds, or an HTTP date measured against `wall`) as
 * milliseconds; undefined when absent or neither. Only whole seconds and dates of RFC
 * 9110's forms are read: `1.5`, `-1` or `Mon 1` is neither (Date.parse reads each as a
 * date in 2001).
 *
 * @example retryAfterMs('2', Date.now()) // 2000
 */
export function retryAfterMs(value: string | null | undefined, wall: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!HTTP_DATE.test(text)) return undefined;
  // asctime's form names no zone: it is GMT, as every HTTP date is (read as local time, it would move with the machine's zone).
  const date = Date.parse(text.endsWith(' GMT') ? text : `${text} GMT`);
  return Number.isNaN(date) ? undefined : Math.max(0, date - wall);
}
