import { Conflict, Unavailable } from '../shared/index.js';
import type { ClientClock } from '../records/index.js';
import type { SettingsWriter, Storage } from '../store/index.js';
import { RealClock } from './clock.js';
import type { Clocks } from './clocks.js';
import { KEEP_EVERY_MS, keptState } from './kept.js';
import { SPEED_SETTLE_MS } from './load.js';
import { SaveLater } from './save-later.js';
import type { ClockSync } from './sync.js';

/** A client's clock as `GET /__sandbox/clock` shows it: its time and its own pending jobs only. */
export interface ClockView {
  mode: 'real' | 'manual';
  speed: number;
  now: string;
  now_ms: number;
  pending_jobs: number;
  next_due: string | null;
}

/** Keeps a client's clock at `at` where every process reads it (a shared store), before the clock moves there. */
export type KeepClock = (clientId: string, at: number) => Promise<void>;

/**
 * What moves the clocks and runs the jobs that fall due on the way (the scheduler, which
 * sits above the clocks: it takes them, they do not take it).
 */
export interface DueWork {
  /** Moves the client's clock on by `ms`, running its jobs due on the way; `keep` keeps the clock at each due time before its jobs run. */
  advance(clientId: string, ms: number, keep?: KeepClock): Promise<void>;
  /** Moves every clock on by `ms`, each as `advance` does. */
  advanceAll(ms: number, keep?: KeepClock): Promise<void>;
  /** The clocks moved or changed pace: the wait for the next due job is another. */
  rearm(): void;
}

/** How often a clock's save that the store refused is tried again (see ClockService.savedAfter). */
const SAVE_RETRY_MS = 1_000;

/** A shared store's advance that the database's absence cut short: how far it got is kept, and is what GET /__sandbox/clock shows. */
const ADVANCE_STOPPED =
  'The advance stopped part-way: the store cannot save changes right now (GET /__sandbox/health says why). ' +
  'The clock stands where GET /__sandbox/clock says on every replica, and what fell due before that time has run; what is due at it runs at the next advance ({"ms": 0} will do). Advance again for the rest of the way once the store takes writes.';

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

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
    private readonly scheduler: DueWork,
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
      // Kept at the target before anything due on the way runs: a process killed in the
      // middle restarts there, never behind what it already recorded and sent (what was
      // still due then runs at the start). A shared store keeps it at each due time on the
      // way instead (see keepShared).
      // A store that cannot write now (a full disk) fails the advance where it always did: at its jobs and its save.
      if (!this.sync && clientId !== '') await this.keep(clientId, this.clocks.savedAfter(clientId, ms)).catch(() => undefined);
      const target = `it was to reach ${iso(this.clocks.of(clientId) + ms)}`;
      await this.savedAfter([clientId], target, () => this.scheduler.advance(clientId, ms, this.keepShared));
    };
    await (this.sync ? this.sync.shared.exclusive([clientId], run) : run());
  }

  /**
   * On a shared store, keeps an advancing clock at each due time before it moves there and
   * the jobs due then run: every replica reads the time as it moves, never behind what the
   * advance has recorded and sent, and an advance cut short (the database away, the replica
   * killed) leaves the clock where its work stopped, for every replica. Keeping only the
   * target first, as a data file does, would let the other replicas' timers run the jobs on
   * the way at the target's time instead of each at its own.
   */
  private get keepShared(): KeepClock | undefined {
    const { sync } = this;
    if (!sync) return undefined;
    return async (clientId, at) => {
      const clock = this.clocks.savedAfter(clientId, Math.max(0, at - this.clocks.of(clientId)));
      this.clocks.adopt(await sync.shared.moveOn(new Map([[clientId, clock]])));
    };
  }

  /**
   * Runs an advance, then saves the clients' clocks (and `also`, the sandbox's own), also
   * when the advance failed (what fell due could not be saved): how far it got is kept, on
   * a shared store for every replica. On a shared store whose database is away, each
   * save (a client's clock, the sandbox's) is tried again until it holds, so no replica stays ahead of the others; and the
   * answer says the advance stopped part-way, and where it was to take the clocks (`target`).
   */
  private async savedAfter(clientIds: readonly string[], target: string, advance: () => Promise<void>, also?: () => Promise<void>): Promise<void> {
    let failure: unknown;
    try {
      await advance();
    } catch (error) {
      failure = error;
    }
    for (const clientId of clientIds) {
      try {
        await this.save(clientId);
      } catch (error) {
        if (this.sync) this.saveLater.add(clientId, () => this.save(clientId));
        failure ??= error;
      }
    }
    try {
      await also?.();
    } catch (error) {
      if (this.sync && also) this.saveLater.add('', also);
      failure ??= error;
    }
    if (failure === undefined) return;
    if (failure instanceof Unavailable) {
      // The database away (an answer that would say "nothing was saved"): the steps before the failure were saved.
      const message = this.sync && failure.readMessage !== undefined ? ADVANCE_STOPPED : failure.message;
      throw new Unavailable(`${message} (${target})`, failure.retryAfterSeconds);
    }
    throw failure;
  }

  /** The clocks whose save waits for a shared store's database (see savedAfter). */
  private readonly saveLater = new SaveLater(SAVE_RETRY_MS);

  /** Moves every client's clock, and the sandbox's, on by `ms`. */
  async advanceAll(ms: number): Promise<void> {
    const run = async (): Promise<void> => {
      await this.sync?.all();
      // The clocks moved are saved also when a client's advance failed (its jobs could not be saved): what was done is kept.
      await this.savedAfter(this.clocks.clients, `each clock was to move on by ${ms} ms`, () => this.scheduler.advanceAll(ms, this.keepShared), async () => {
        if (this.clocks.mode !== 'manual') return;
        if (this.sync) this.clocks.adopt(await this.sync.shared.moveOn(new Map(), this.clocks.now()));
        await this.storage.meta.set('manual_clock_ms', this.clocks.now());
      });
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

  /**
   * The sandbox's clock after `advanceAll(ms)`: its pending jobs, and as `now` the time the
   * advance took the clocks to. A manual sandbox clock moved there itself; a real one keeps
   * wall pace (it cannot jump), so `now` is its time plus `ms`, where every client that ran
   * with it stands now (a client that ran ahead stands as far ahead of that).
   */
  async advancedView(ms: number): Promise<ClockView> {
    const view = await this.sandboxView();
    if (this.clocks.mode === 'manual') return view;
    const now = view.now_ms + ms;
    return { ...view, now: new Date(now).toISOString(), now_ms: now };
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
    // A save waiting for the database is not tried again once the sandbox stops.
    this.saveLater.stop();
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
    await this.keep(clientId, clock);
  }

  private async keep(clientId: string, clock: ClientClock): Promise<void> {
    await this.settings.change(clientId, (settings) => ({ settings: { ...settings, clock }, result: undefined }));
  }
}
