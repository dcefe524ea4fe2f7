import type { Logger } from 'pino';
import { WarningThrottle } from '../../../shared/index.js';
import { describeError, errnoOf } from './files.js';

/** How often a warning about failed journal writes may be logged per error code. */
const WARN_EVERY_MS = 60_000;

/**
 * Logs the store's failed journal writes, which no caller logs (each request answers 503,
 * and /__sandbox/health shows the store degraded): one warning per error code per minute,
 * and one info line when writes succeed again after a warning, so a disk that fills up
 * under load logs a few lines, not one per request.
 *
 * @example
 * const { onWriteFailed, onWriteResumed } = writeWarnings(logger);
 * await JournaledFile.open({ path, onWriteFailed, onWriteResumed });
 */
export function writeWarnings(logger: Logger, now: () => number = Date.now): { onWriteFailed: (error: Error) => void; onWriteResumed: () => void } {
  const throttle = new WarningThrottle(WARN_EVERY_MS, now);
  let warned = false;
  return {
    onWriteFailed: (error) => {
      const code = errnoOf(error);
      const held = throttle.take(code);
      if (held === undefined) return;
      warned = true;
      logger.warn(
        { code, error: describeError(error), failures_unlogged: held },
        `the data file cannot be written (${code}): the store is degraded, changes answer 503 until a write succeeds (at most one such warning per error code per minute)`,
      );
    },
    onWriteResumed: () => {
      if (!warned) return;
      warned = false;
      logger.info('the data file takes writes again: the store is no longer degraded');
    },
  };
}
