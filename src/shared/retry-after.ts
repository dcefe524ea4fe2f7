/** An HTTP date as Retry-After may give one: RFC 9110's IMF-fixdate, and its obsolete forms, begin with the day's name. */
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;

/**
 * A `Retry-After` value (delay-seconds, or an HTTP date measured against `wall`) as
 * milliseconds; undefined when absent or neither. Only whole seconds and dates are read:
 * `1.5` or `-1` is neither (Date.parse reads both as dates in 2001).
 *
 * @example retryAfterMs('2', Date.now()) // 2000
 */
export function retryAfterMs(value: string | null | undefined, wall: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!HTTP_DATE.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - wall);
}
