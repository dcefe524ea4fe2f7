import type { Logger } from 'pino';
import { Unavailable } from './errors.js';

/** How long the failures of one kind of background work that the store's state explains are gathered into one summary. */
const WINDOW_MS = 60_000;

/** The events of one kind held back since the first of its window. */
interface Window {
  held: number;
  clients: Set<string>;
  /** When the first event opened it (wall ms). */
  opened: number;
}

/**
 * Gathers repeated events into windows: the first of a kind opens one (the caller logs it at
 * once), the rest within `windowMs` after it are counted, with the clients they name, and at
 * the window's end `summary` gets the count if there was any, with the first's wall time. The
 * next event then opens a new window.
 *
 * @example
 * const opens = firstOfWindow(60_000, (kind, held) => logger.warn({ held }, `${kind}: ${held} more`));
 * if (opens('request journal', client)) logger.warn('request journal failed');
 */
export function firstOfWindow(windowMs: number, summary: (kind: string, held: number, clients: string[], opened: number) => void): (kind: string, client?: string) => boolean {
  const windows = new Map<string, Window>();
  return (kind, client) => {
    const open = windows.get(kind);
    if (open) {
      open.held += 1;
      if (client !== undefined) open.clients.add(client);
      return false;
    }
    const window: Window = { held: 0, clients: new Set(), opened: Date.now() };
    windows.set(kind, window);
    setTimeout(() => {
      windows.delete(kind);
      if (window.held > 0) summary(kind, window.held, [...window.clients], window.opened);
    }, windowMs).unref();
    return true;
  };
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
  // Logged when the minute ends, by then perhaps after the outage: its words are of the past, and `first_at` says when the minute began.
  const opens = firstOfWindow(windowMs, (what, held, clients, opened) =>
    logger.warn({ failures: held, clients, first_at: new Date(opened).toISOString() }, `${what}: ${held} more failed in the minute after the first, while the store was unavailable${clients.length > 0 ? ` (clients ${clients.join(', ')})` : ''}`),
  );
  return (what, err, lost, fields = {}) => {
    if (!(err instanceof Unavailable)) {
      logger.error({ err, ...fields }, `${what} failed`);
      return;
    }
    if (opens(what, typeof fields.client === 'string' ? fields.client : undefined)) {
      logger.warn({ ...fields, error: err.message }, `${what}: ${lost}, the store being unavailable`);
    }
  };
}
