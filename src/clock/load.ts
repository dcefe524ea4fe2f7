import type { SharedClockRepository, Storage } from '../store/index.js';
import { ManualClock, RealClock } from './clock.js';
import { Clocks } from './clocks.js';
import { keptState } from './kept.js';

/**
 * How long (wall ms) a speed change set on a shared store waits before it takes effect:
 * a replica that read the old speed just before the change keeps reading times that the
 * new one only reaches later, so no clock moves back across replicas.
 */
export const SPEED_SETTLE_MS = 250;

/** A manual clock resumes where the data file's stopped, or at --clock-start if that is later. */
function manualClockStart(start: number | undefined, kept: number | undefined): number {
  if (start === undefined) return kept ?? Date.now();
  return Math.max(kept ?? start, start);
}

/**
 * The clocks of a data file: the sandbox's (a manual one resumes where it stood, kept in
 * meta as `manual_clock_ms`) and each client's, from its settings. A client with no
 * clock of its own runs with the sandbox's, so the one clock of a data file written
 * before clocks were per client becomes each client's clock.
 */
export async function loadClocks(storage: Storage, options: ClockOptions, clientIds: readonly string[]): Promise<Clocks> {
  if (storage.sharedClocks) return loadSharedClocks(storage, storage.sharedClocks, options, clientIds);
  let base: RealClock | ManualClock;
  if (options.clock === 'manual') {
    const kept = await storage.meta.get('manual_clock_ms');
    base = new ManualClock(manualClockStart(options.clockStart, kept));
    // Kept from the first start on: a client that never moved stands here after a restart too.
    if (kept !== base.now()) await storage.meta.set('manual_clock_ms', base.now());
  } else {
    base = new RealClock(options.speed);
    const kept = await storage.meta.get('real_clock');
    if (kept) {
      const wall = Date.now();
      const stood = new RealClock(kept.speed);
      stood.load(kept);
      if (kept.kept_until_wall_ms === undefined) {
        // It ran at wall pace: it runs on through the stop, as wall time does (with its lead).
        base.load(kept);
      } else {
        // It ran faster or slower: it resumes where it is known to have stood, neither behind
        // the times it stamped (wall time would be, for a clock that ran faster) nor past them
        // by the length of the stop at its pace (which would make every record look old).
        base.load({ sim_base_ms: stood.at(Math.min(wall, kept.kept_until_wall_ms)), wall_base_ms: wall, speed: kept.speed, previous_speed: kept.speed });
      }
      // A restart goes back to --speed, from now on (no jump).
      if (base.speed !== options.speed) base.setSpeed(options.speed);
    }
    await storage.meta.set('real_clock', keptState(base));
  }
  const clocks = new Clocks(base, clientIds);
  for (const clientId of clientIds) {
    const kept = (await storage.settings.get(clientId))?.clock;
    if (kept) clocks.restore(clientId, kept, options.clockStart);
  }
  return clocks;
}

interface ClockOptions {
  clock: 'real' | 'manual';
  speed: number;
  clockStart: number | undefined;
}

/**
 * The clocks of a shared store (PostgreSQL), which keeps them: a manual clock resumes
 * where it stands (or at --clock-start if later); a real clock runs on at the kept pace,
 * unless this replica was started with another --speed than the last start was (then
 * that speed applies from now on, as a speed change); each client's as kept.
 */
async function loadSharedClocks(storage: Storage, shared: SharedClockRepository, options: ClockOptions, clientIds: readonly string[]): Promise<Clocks> {
  const kept = await shared.read();
  let base: RealClock | ManualClock;
  if (options.clock === 'manual') {
    const stands = kept.manualMs ?? (await storage.meta.get('manual_clock_ms'));
    base = new ManualClock(manualClockStart(options.clockStart, stands));
    if (stands !== base.now()) {
      await shared.moveOn(new Map(), base.now());
      await storage.meta.set('manual_clock_ms', base.now());
    }
  } else {
    base = new RealClock(options.speed);
    await startRealClock(shared, base, options.speed, kept.real);
  }
  const clocks = new Clocks(base, clientIds);
  clocks.adopt({ clients: kept.clients });
  // A manual client clock behind --clock-start moves on to it, for every replica.
  const behind = new Map([...kept.clients].filter(([, c]) => options.clock === 'manual' && options.clockStart !== undefined && c.now_ms < options.clockStart));
  if (behind.size > 0) clocks.adopt(await shared.moveOn(new Map([...behind].map(([id, c]) => [id, { ...c, now_ms: options.clockStart! }]))));
  return clocks;
}

async function startRealClock(shared: SharedClockRepository, base: RealClock, speed: number, real: Awaited<ReturnType<SharedClockRepository['read']>>['real']): Promise<void> {
  for (let kept = real; ; kept = (await shared.read([])).real) {
    if (kept) base.load(kept);
    if (kept?.started_speed === speed) return;
    if (kept) base.setSpeed(speed, SPEED_SETTLE_MS);
    if (await shared.setReal({ ...base.state(), started_speed: speed }, kept)) return;
  }
}
