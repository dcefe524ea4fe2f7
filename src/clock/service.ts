import type { Storage } from '../store/port.js';
import { ManualClock, RealClock } from './clock.js';
import { Clocks } from './clocks.js';
import type { Scheduler } from './scheduler.js';

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
export async function loadClocks(storage: Storage, options: { clock: 'real' | 'manual'; speed: number; clockStart: number | undefined }, clientIds: readonly string[]): Promise<Clocks> {
  let base: RealClock | ManualClock;
  if (options.clock === 'manual') {
    const kept = await storage.meta.get('manual_clock_ms');
    base = new ManualClock(manualClockStart(options.clockStart, kept));
    // Kept from the first start on: a client that never moved stands here after a restart too.
    if (kept !== base.now()) await storage.meta.set('manual_clock_ms', base.now());
  } else {
    base = new RealClock(options.speed);
  }
  const clocks = new Clocks(base, clientIds);
  for (const clientId of clientIds) {
    const kept = (await storage.settings.get(clientId))?.clock;
    if (kept) clocks.restore(clientId, kept, options.clockStart);
  }
  return clocks;
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
  constructor(
    private readonly storage: Storage,
    private readonly scheduler: Scheduler,
    readonly clocks: Clocks,
  ) {}

  /** Moves the client's clock on by `ms` and resolves once everything of the client's that fell due has finished. */
  async advance(clientId: string, ms: number): Promise<void> {
    await this.scheduler.advance(clientId, ms);
    await this.save(clientId);
  }

  /** Moves every client's clock, and the sandbox's, on by `ms`. */
  async advanceAll(ms: number): Promise<void> {
    await this.scheduler.advanceAll(ms);
    for (const clientId of this.clocks.clients) await this.save(clientId);
    if (this.clocks.mode === 'manual') await this.storage.meta.set('manual_clock_ms', this.clocks.now());
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
   * Keeps every client's time at a stop. Needed only with a real clock faster than wall
   * time: it restarts at wall time, and the saved time keeps each client's clock from
   * moving back.
   */
  async saveAll(): Promise<void> {
    if (this.clocks.mode !== 'real' || this.clocks.speed === 1) return;
    for (const clientId of this.clocks.clients) await this.save(clientId, true);
  }

  /** Writes the client's clock into its settings (a no-op while it runs with the sandbox's). */
  private async save(clientId: string, always = false): Promise<void> {
    const clock = this.clocks.saved(clientId, always);
    if (!clock) return;
    await this.storage.transaction(async (tx) => {
      const settings = await tx.settings.get(clientId);
      await tx.settings.put(settings ? { ...settings, clock } : { client_id: clientId, webhook: null, generated_secret: null, faults: [], fault_seq: 0, clock });
    });
  }
}
