import type { Logger } from 'pino';
import { Unavailable } from './errors.js';
import { WarningThrottle } from './warning-throttle.js';

/** How often a failure of background work that the store's state explains may be logged per kind of work. */
const WARN_EVERY_MS = 60_000;

/**
 * Logs the failures of work no request waits for (journaling a request, observing it for the
 * readiness report, a scheduled job). A failure the store's state explains (a database away,
 * a full disk: the store's Unavailable) is expected while it lasts, and health already says
 * so: one warning per kind of work a minute, without a stack, saying what was not recorded
 * and how many such failures the minute held. Any other failure is a fault: an error with
 * its stack, each time.
 *
 * @example
 * const failed = backgroundFailures(logger);
 * journal.append(entry).catch((err) => failed('request journal', err, 'request journal entries were not recorded'));
 */
export function backgroundFailures(logger: Logger, now: () => number = Date.now): (what: string, err: unknown, lost: string, fields?: Record<string, unknown>) => void {
  const throttle = new WarningThrottle(WARN_EVERY_MS, now);
  return (what, err, lost, fields = {}) => {
    if (!(err instanceof Unavailable)) {
      logger.error({ err, ...fields }, `${what} failed`);
      return;
    }
    const held = throttle.take(what);
    if (held === undefined) return;
    logger.warn({ ...fields, error: err.message, failures_unlogged: held }, `${what}: ${lost}, the store being unavailable (at most one such warning a minute)`);
  };
}
