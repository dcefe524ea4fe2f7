/** Seconds or an HTTP date, as milliseconds from `wall`; null when absent or unreadable. */
export function retryAfterMs(value: string | undefined, wall: number): number | null {
  if (value === undefined) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - wall);
}
