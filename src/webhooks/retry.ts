import { parseDuration, retryAfterMs } from '../shared/index.js';

/** Default retry schedule: a shortened Svix schedule fit for testing. */
export const DEFAULT_RETRIES = '0,5s,30s,2m,10m,1h,6h';
/** The longest wait a `Retry-After` answer can ask for. */
export const RETRY_AFTER_CAP_MS = 6 * 3_600_000;

/**
 * Parses a retry schedule: one delay per attempt, the first counted from the event,
 * each next one from the failed attempt before it. Undefined when it is not one.
 *
 * @example parseRetries('0,5s,30s') // [0, 5000, 30000]
 */
export function parseRetries(text: string): number[] | undefined {
  const delays = text.split(',').map((part) => parseDuration(part));
  if (delays.length === 0 || delays.some((d) => d === undefined)) return undefined;
  return delays as number[];
}

/**
 * Reads a `Retry-After` header (seconds, or an HTTP date measured against `nowMs`)
 * into milliseconds, capped at 6 hours. Undefined when absent or unreadable.
 */
export function cappedRetryAfterMs(header: string | null, nowMs: number): number | undefined {
  const ms = retryAfterMs(header, nowMs);
  return ms === undefined ? undefined : Math.min(ms, RETRY_AFTER_CAP_MS);
}

/**
 * When the next scheduled attempt is due after `made` failed scheduled attempts, or
 * undefined when the schedule is used up. A `Retry-After` can only make the wait longer.
 */
export function nextAttemptAt(schedule: number[], made: number, failedAt: number, retryAfter?: number): number | undefined {
  const delay = schedule[made];
  if (delay === undefined) return undefined;
  return failedAt + Math.max(delay, retryAfter ?? 0);
}
