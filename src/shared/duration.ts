const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;

/**
 * Parses a duration such as `0`, `500ms`, `3s`, `1d4h`, `2h30m` into milliseconds.
 * A bare number is milliseconds. Returns undefined when the text is not a duration.
 *
 * @example parseDuration('1d4h') // 100_800_000
 */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  if (!/^((\d+(\.\d+)?)(ms|s|m|h|d))+$/.test(t)) return undefined;
  let total = 0;
  for (const [, n, unit] of t.matchAll(PART)) total += Number(n) * UNIT_MS[unit as string]!;
  return Math.round(total);
}

/**
 * The first number other than 0 written without a unit in a duration, a delay range or a
 * list of delays (`5`, `2s-10`, `0,5,30`), trimmed; undefined when there is none. Read as
 * milliseconds by parseDuration, such a number is rarely what its writer meant.
 *
 * @example unitlessNumber('0,5,30s') // '5'
 */
export function unitlessNumber(text: string): string | undefined {
  return text
    .split(/[,-]/)
    .find((part) => /^\s*\d+(\.\d+)?\s*$/.test(part) && Number(part) !== 0)
    ?.trim();
}

/** A fixed delay or a range to draw from, both in milliseconds. */
export interface DelayRange {
  min: number;
  max: number;
}

/**
 * Parses a delay written as a duration (`3s`) or a range (`2s-10s`).
 *
 * @example parseDelayRange('2s-10s') // { min: 2000, max: 10000 }
 */
export function parseDelayRange(text: string): DelayRange | undefined {
  const [a, b, ...rest] = text.split('-');
  if (rest.length > 0 || a === undefined) return undefined;
  const min = parseDuration(a);
  const max = b === undefined ? min : parseDuration(b);
  if (min === undefined || max === undefined || max < min) return undefined;
  return { min, max };
}

/** Formats milliseconds for people, as the docs and the flags write durations: 90000 -> "1m30s", 0 -> "0s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  let rest = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('');
}
