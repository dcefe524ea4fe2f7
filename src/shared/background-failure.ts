import type { Logger } from 'pino';
import { Unavailable } from './errors.js';

/** How long the failures of one kind of background work that the store's state explains are gathered into one summary. */
const WINDOW_MS = 60_000;

/** The failures of one kind of work held back since its last warning. */
interface Window {
  held: number;
  clients: Set<string>;
}

/**
 * Logs the failures of work no request waits for (journaling a request, observing it for the
 * readiness report, a scheduled job). A failure the store's state explains (a database away,
 * a full disk: the store's Unavailable) is expected while it lasts, and health already says
 * so: the first of a kind is a warning without a stack saying what was not recorded, and the
 * rest of the minute after it one more warning at its end, counting them and naming their
 * clients, so that an outage of a few seconds still tells what it cost. Any other failure is a
 * fault: an error with its stack, each time.
 *
 * @example
 * const failed = backgroundFailures(logger);
 * journal.append(entry).catch((err) => failed('request journal', err, 'requests were not journaled', { client }));
 */
export function backgroundFailures(logger: Logger, windowMs = WINDOW_MS): (what: string, err: unknown, lost: string, fields?: Record<string, unknown>) => void {
  const windows = new Map<string, Window>();
  return (what, err, lost, fields = {}) => {
    if (!(err instanceof Unavailable)) {
      logger.error({ err, ...fields }, `${what} failed`);
      return;
    }
    const open = windows.get(what);
    if (open) {
      open.held += 1;
      if (typeof fields.client === 'string') open.clients.add(fields.client);
      return;
    }
    logger.warn({ ...fields, error: err.message }, `${what}: ${lost}, the store being unavailable`);
    const window: Window = { held: 0, clients: new Set() };
    windows.set(what, window);
    setTimeout(() => {
      windows.delete(what);
      if (window.held === 0) return;
      const clients = [...window.clients];
      logger.warn({ failures: window.held, clients }, `${what}: ${window.held} more failed in the minute after that, the store being unavailable${clients.length > 0 ? ` (clients ${clients.join(', ')})` : ''}`);
    }, windowMs).unref();
  };
}
