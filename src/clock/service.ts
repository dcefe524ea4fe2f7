import { Conflict } from '../shared/index.js';
import type { SettingsWriter } from '../store/index.js';
import type { Meta, SharedClockRepository, Storage } from '../store/index.js';
import { ManualClock, RealClock } from './clock.js';
import { Clocks } from './clocks.js';
import type { Scheduler } from './scheduler.js';
import type { ClockSync } from './sync.js';

/**
 * How long (wall ms) a speed change set on a shared store waits before it takes effect:
 * a replica that read the old speed just before the change keeps reading times that the
 * new one only reaches later, so no clock moves back across replicas.
 */
export const SPEED_SETTLE_MS = 250;

/** A client's clock as `GET /__sandbox/clock` shows it: its time and its own pending jobs only. */
export interface ClockView {
  mode: 'real' | 'manual';
  speed: number;
  now: string;
  now_ms: number;
  pending_jobs: number;
  next_due: string | null;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** How often a real clock running at another pace than wall time's notes how far it has run. */
const KEEP_EVERY_MS = 1_000;

/**
 * The real clock's state as the data file keeps it. At wall pace nothing more is needed:
 * it runs on through a stop as wall time does. At another pace, the wall time up to which
 * it is known to have run: `ahead` ms from now (two beats of the keeper, so a crash just
 * before a beat is covered), or the very moment of a stop (0).
 */
function keptState(base: RealClock, ahead = 2 * KEEP_EVERY_MS): Meta['real_clock'] {
  const state = base.state();
  return state.speed === 1 ? state : { ...state, kept_until_wall_ms: Date.now() + ahead };
}

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
        // It ran faster or slower: it resumes where it is known to have stood (restarting at
        // wall time put a clock that had run faster days behind the orders it had stamped;
        // running on through the stop at its pace moved it years on, and --retention's
        // first sweep then removed every order).
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

/**
 * Advances of the clocks, and their state: the scheduler moves a clock and runs what
 * falls due; this keeps the result in the store, so each client's time survives a restart.
 *
 * @example
 * await clockService.advance('client-a', 3 * 86_400_000); // only client-a's orders move
 * await clockService.advanceAll(60_000); // an admin's advance of every clock
 */
export class ClockService {
  /**
   * On a shared store: brings the client's clock ('' : the sandbox's) up to what the
   * store keeps, before a request uses it. Undefined on a store of one process, whose
   * clocks are its own (no cost per request).
   */
  readonly refresh: ((clientId: string) => Promise<void>) | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly settings: SettingsWriter,
    private readonly scheduler: Scheduler,
    readonly clocks: Clocks,
    private readonly sync?: ClockSync,
  ) {
    this.refresh = sync && ((clientId) => sync.client(clientId));
    // Another replica moved a clock: its jobs may be due earlier in wall time now.
    sync?.shared.onChange((clientIds) => {
      sync.all(clientIds).then(
        () => this.scheduler.rearm(),
        () => undefined, // the next request or wake-up reads the clocks again
      );
    });
  }

  private keeper: NodeJS.Timeout | undefined;

  /**
   * While the sandbox's real clock (of a data file) runs at another pace than wall time's,
   * notes every second how far it has run, so that a restart after a crash resumes it no
   * earlier than anything it showed (see loadClocks). A line in the journal a second, only
   * then.
   */
  keepRealClock(): void {
    const { base } = this.clocks;
    this.stopKeeping();
    if (this.sync || !(base instanceof RealClock) || base.speed === 1) return;
    this.keeper = setInterval(() => {
      void this.storage.meta.set('real_clock', keptState(base)).catch(() => undefined); // a store that cannot write: the next beat tries again
    }, KEEP_EVERY_MS).unref();
  }

  private stopKeeping(): void {
    clearInterval(this.keeper);
    this.keeper = undefined;
  }

  /**
   * Moves the client's clock on by `ms` and resolves once everything of the client's that
   * fell due has finished. On a shared store the advance holds the client's clock, starts
   * from the kept time and writes the new one before it resolves.
   */
  async advance(clientId: string, ms: number): Promise<void> {
    const run = async (): Promise<void> => {
      await this.sync?.client(clientId);
      await this.scheduler.advance(clientId, ms);
      await this.save(clientId);
    };
    await (this.sync ? this.sync.shared.exclusive([clientId], run) : run());
  }

  /** Moves every client's clock, and the sandbox's, on by `ms`. */
  async advanceAll(ms: number): Promise<void> {
    const run = async (): Promise<void> => {
      await this.sync?.all();
      await this.scheduler.advanceAll(ms);
      for (const clientId of this.clocks.clients) await this.save(clientId);
      if (this.clocks.mode !== 'manual') return;
      if (this.sync) this.clocks.adopt(await this.sync.shared.moveOn(new Map(), this.clocks.now()));
      await this.storage.meta.set('manual_clock_ms', this.clocks.now());
    };
    await (this.sync ? this.sync.shared.exclusive([...this.clocks.clients, ''], run) : run());
  }

  /**
   * Sets the real clock's speed from now on (sandbox-wide; no clock jumps). A manual
   * clock has none: a Conflict. On a shared store the new speed is kept for every
   * replica and takes effect `SPEED_SETTLE_MS` later, when this resolves.
   */
  async setSpeed(speed: number): Promise<void> {
    const { base } = this.clocks;
    if (!(base instanceof RealClock)) throw new Conflict('A manual clock has no speed: it moves only by POST /__sandbox/clock/advance. Start with --clock real to set a speed.');
    if (!this.sync) {
      base.setSpeed(speed);
      // Kept at once: a crash after it must not restart the clock behind what it showed.
      await this.storage.meta.set('real_clock', keptState(base));
      this.keepRealClock();
      this.scheduler.rearm();
      return;
    }
    for (;;) {
      const { real } = await this.sync.shared.read([]);
      if (real) base.load(real);
      base.setSpeed(speed, SPEED_SETTLE_MS);
      if (await this.sync.shared.setReal({ ...base.state(), started_speed: real?.started_speed ?? speed }, real)) break;
    }
    this.scheduler.rearm();
    await new Promise((resolve) => setTimeout(resolve, SPEED_SETTLE_MS));
  }

  /** The sandbox's own clock, with every client's pending jobs (an admin's view). */
  async sandboxView(): Promise<ClockView> {
    const now = this.clocks.now();
    return {
      mode: this.clocks.mode,
      speed: this.clocks.speed,
      now: new Date(now).toISOString(),
      now_ms: now,
      pending_jobs: await this.storage.jobs.count(),
      next_due: iso(await this.storage.jobs.nextDue()),
    };
  }

  /** The client's clock: its time, and only its own pending jobs. */
  async view(clientId: string): Promise<ClockView> {
    const now = this.clocks.of(clientId);
    return {
      mode: this.clocks.mode,
      speed: this.clocks.speed,
      now: new Date(now).toISOString(),
      now_ms: now,
      pending_jobs: await this.storage.jobs.count(clientId),
      next_due: iso(await this.storage.jobs.nextDue({ clientId })),
    };
  }

  /**
   * Keeps every client's time at a stop, with a real clock faster than wall time. The
   * sandbox's real clock is kept too (`real_clock`), so a client's lead over it is what
   * counts; this keeps a data file from before that from restarting a client behind the
   * time it was saved at.
   */
  async saveAll(): Promise<void> {
    // A shared store keeps the real clock's pace and base: it runs on across a restart.
    if (this.sync) return;
    this.stopKeeping();
    // Where the sandbox's clock stands at the stop, exactly.
    if (this.clocks.base instanceof RealClock) await this.storage.meta.set('real_clock', keptState(this.clocks.base, 0));
    if (this.clocks.mode !== 'real' || this.clocks.speed === 1) return;
    for (const clientId of this.clocks.clients) await this.save(clientId, true);
  }

  /**
   * Writes the client's clock into its settings (a no-op while it runs with the
   * sandbox's); on a shared store first into the clocks it keeps, never back.
   */
  private async save(clientId: string, always = false): Promise<void> {
    let clock = this.clocks.saved(clientId, always);
    if (!clock) return;
    if (this.sync && clientId !== '') {
      this.clocks.adopt(await this.sync.shared.moveOn(new Map([[clientId, clock]])));
      clock = this.clocks.saved(clientId, always)!;
    }
    const kept = clock;
    await this.settings.change(clientId, (settings) => ({ settings: { ...settings, clock: kept }, result: undefined }));
  }
}
