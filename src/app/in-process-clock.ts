import { LATEST_CLOCK_MS } from '../clock/index.js';
import type { Services } from './services.js';

/** The most one advance moves a clock, as `POST /__sandbox/clock/advance` allows: a year. */
const MOST_MS = 31_536_000_000;

/** The sandbox's clocks as in-process users see them: one per client, over the sandbox's own. */
export interface SandboxClock {
  readonly mode: 'real' | 'manual';
  /** The sandbox's time (a client that was never advanced runs with it). */
  now(): number;
  /** The client's time now; a client that is not configured is a RangeError. */
  of(clientId: string): number;
  /** Moves every client's clock (and, on a manual clock, the sandbox's) on by `ms` and resolves once everything due by then has run. Rejects once `close()` was called. */
  advance(ms: number): Promise<void>;
  /** Moves one client's clock on by `ms`, as `POST /__sandbox/clock/advance` does for its caller. Rejects once `close()` was called. */
  advanceClient(clientId: string, ms: number): Promise<void>;
}

/**
 * `sandbox.clock`, with the checks the control API makes of an advance: a whole number of
 * milliseconds from 0 to a year that keeps the clock within the latest time it can show,
 * and a configured client. A bad value is a RangeError (a test's mistake, named), never a
 * clock that reads NaN or an advance that cannot end. Once the sandbox is closing
 * (`isClosed`), an advance is refused: its jobs would run against a store that is closed.
 */
export function inProcessClock({ clock, clockService, registry, advanceClock }: Pick<Services, 'clock' | 'clockService' | 'registry' | 'advanceClock'>, isClosed: () => boolean): SandboxClock {
  const open = (what: string): void => {
    if (isClosed()) throw new Error(`${what}: the sandbox is closed (close() was called): start another with createSandbox()`);
  };
  const configured = (what: string, clientId: string): string => {
    if (!registry.clientIds.includes(clientId)) throw new RangeError(`${what}: no client ${JSON.stringify(clientId)} is configured (its clients: ${registry.clientIds.join(', ')})`);
    return clientId;
  };
  const checked = (what: string, ms: unknown, from: number): number => {
    if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0 || ms > MOST_MS) {
      throw new RangeError(`${what}: ms must be a whole number of milliseconds from 0 to ${MOST_MS} (a year), not ${typeof ms === 'string' ? `"${ms}"` : String(ms)}`);
    }
    if (ms > 0 && from + ms > LATEST_CLOCK_MS) throw new RangeError(`${what}: ${ms} ms would move the clock past ${new Date(LATEST_CLOCK_MS).toISOString()}, the latest time the sandbox can show`);
    return ms;
  };
  return {
    mode: clock.mode,
    now: () => clock.now(),
    of: (clientId) => clock.of(configured('sandbox.clock.of', clientId)),
    // As POST /__sandbox/clock/advance-all: checked against the sandbox's clock; a client near the latest time stops there.
    advance: async (ms) => {
      open('sandbox.clock.advance');
      return advanceClock(checked('sandbox.clock.advance', ms, clock.now()));
    },
    advanceClient: async (clientId, ms) => {
      open('sandbox.clock.advanceClient');
      configured('sandbox.clock.advanceClient', clientId);
      return clockService.advance(clientId, checked('sandbox.clock.advanceClient', ms, clock.of(clientId)));
    },
  };
}
