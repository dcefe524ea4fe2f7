import type { SharedClockRepository, Storage } from '../store/index.js';
import type { Meta } from '../records/index.js';
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
 * before clocks were per client becomes each client's clock. A start with the other
 * `--clock` than the last (kept as `clock_mode`) starts no clock behind where the last one's
 * stands: a manual clock after a real one starts at its time, a real one after a manual
 * clock kept ahead of wall time runs on from it.
 */
export async function loadClocks(storage: Storage, options: ClockOptions, clientIds: readonly string[]): Promise<Clocks> {
  if (storage.sharedClocks) return loadSharedClocks(storage, storage.sharedClocks, options, clientIds);
  const keptManual = await storage.meta.get('manual_clock_ms');
  const keptReal = await storage.meta.get('real_clock');
  const keptMode = (await storage.meta.get('clock_mode'))?.mode;
  const lastMode = keptMode ?? (keptManual === undefined && keptReal !== undefined ? 'real' : undefined);
  // Where the real clock of the last start stands now, when that start ran one: a manual clock starts no earlier.
  const realBefore = lastMode === 'real' && keptReal ? resumedRealClock(keptReal, options.speed).now() : undefined;
  let base: RealClock | ManualClock;
  if (options.clock === 'manual') {
    base = new ManualClock(Math.max(manualClockStart(options.clockStart, keptManual), realBefore ?? -Infinity));
    // Kept from the first start on: a client that never moved stands here after a restart too.
    if (keptManual !== base.now()) await storage.meta.set('manual_clock_ms', base.now());
  } else {
    base = keptReal ? resumedRealClock(keptReal, options.speed) : new RealClock(options.speed);
    // A manual clock kept ahead of it (a start with --clock manual, advanced): the real one runs on from there, never behind it.
    if (keptManual !== undefined && keptManual > base.now()) base.load({ ...base.state(), sim_base_ms: keptManual, wall_base_ms: Date.now() });
    await storage.meta.set('real_clock', keptState(base));
  }
  const clocks = new Clocks(base, clientIds);
  const switched = lastMode !== undefined && lastMode !== options.clock;
  for (const clientId of clientIds) {
    const settings = await storage.settings.get(clientId);
    const kept = settings?.clock;
    if (!kept) continue;
    // A client's real clock ran on at its offset from the sandbox's since it was saved.
    clocks.restore(clientId, kept, Math.max(options.clockStart ?? -Infinity, realBefore === undefined ? -Infinity : realBefore + kept.offset_ms));
    // Kept as this --clock keeps it: the next start restores it as this start did.
    if (switched) await storage.settings.put({ ...settings, clock: clocks.saved(clientId, true)! });
  }
  // Written when it changes only (a manual clock that stands where it stood writes nothing at a start), and
  // last: a start that stops before it has saved every client's clock is taken again as a switch by the next.
  if (keptMode !== options.clock) await storage.meta.set('clock_mode', { mode: options.clock, at: new Date().toISOString() });
  return clocks;
}

/**
 * What a start says when manual clocks resumed from the store later than `--clock-start`
 * (the sandbox's, or a client's own, advanced apart from it before the restart): the flag
 * moved none of them, as a clock never moves back; undefined when every clock stands at it.
 * `clients`: the first 20 of the `clients_total` clients whose own clock is later.
 */
export function clockStartPassed(options: ClockOptions, clocks: Clocks): { message: string; clients: string[]; clients_total: number } | undefined {
  const start = options.clockStart;
  if (options.clock !== 'manual' || start === undefined) return undefined;
  const own = [...clocks.leads().keys()].filter((id) => clocks.of(id) > start);
  const sandbox = clocks.now() > start;
  if (own.length === 0 && !sandbox) return undefined;
  const at = (ms: number): string => new Date(ms).toISOString();
  const whose = [
    sandbox && `the sandbox's manual clock (every client's that never moved apart from it) resumes at ${at(clocks.now())}`,
    own.length === 1 && `the clock of client ${own[0]} resumes at ${at(clocks.of(own[0]!))}`,
    own.length > 1 && `the clocks of ${own.length} clients resume`,
  ].filter(Boolean);
  return {
    message: `${whose.join('; ')}, where the store kept ${whose.length > 1 || own.length > 1 ? 'them' : 'it'}: later than --clock-start ${at(start)}, which moves no clock back (a new data file, or a new database, starts at it; GET /__sandbox/clock shows a client's)`,
    clients: own.slice(0, 20),
    clients_total: own.length,
  };
}

/** The real clock of a data file, run on to now at the pace it kept, then at `speed`. */
function resumedRealClock(kept: NonNullable<Meta['real_clock']>, speed: number): RealClock {
  const base = new RealClock(speed);
  const wall = Date.now();
  if (kept.kept_until_wall_ms === undefined) {
    // It ran at wall pace: it runs on through the stop, as wall time does (with its lead).
    base.load(kept);
  } else {
    // It ran faster or slower: it resumes where it is known to have stood, neither behind
    // the times it stamped (wall time would be, for a clock that ran faster) nor past them
    // by the length of the stop at its pace (which would make every record look old).
    const stood = new RealClock(kept.speed);
    stood.load(kept);
    base.load({ sim_base_ms: stood.at(Math.min(wall, kept.kept_until_wall_ms)), wall_base_ms: wall, speed: kept.speed, previous_speed: kept.speed });
  }
  // A restart goes back to --speed, from now on (no jump).
  if (base.speed !== speed) base.setSpeed(speed);
  return base;
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
