import { ManualClock, RealClock, type Clock } from './clock.js';
import type { ClientClock, ClockLead, KeptClocks } from '../records/index.js';

/**
 * The sandbox's clocks: one per client (like Stripe's test clocks) over the sandbox's
 * own clock, which times sandbox-wide work (client id '').
 *
 * - Real: a client's time is the sandbox's (wall time x speed) plus its offset; an
 *   advance is a jump that grows the offset.
 * - Manual: a client's clock stands where its last advance left it; a client that
 *   was never advanced stands with the sandbox's clock.
 *
 * No clock ever moves back. Speed is the sandbox's, shared by every client.
 *
 * @example
 * const clocks = new Clocks(new ManualClock(0));
 * clocks.moveTo('client-a', 5_000);
 * clocks.of('client-a'); // 5000; clocks.of('client-b') is still 0
 */
export class Clocks implements Clock {
  /** Manual: where each client's clock stands; real: how far each runs ahead of the sandbox's. */
  private readonly own = new Map<string, number>();

  /** The clients an advance of every clock moves (the configured ones, each once: several tokens may name one client). */
  readonly clients: readonly string[];

  constructor(
    readonly base: RealClock | ManualClock,
    clients: readonly string[] = [],
  ) {
    this.clients = [...new Set(clients)];
  }

  get mode(): 'real' | 'manual' {
    return this.base.mode;
  }

  get speed(): number {
    return this.base.speed;
  }

  /** The sandbox's time: of sandbox-wide work, and of clients whose clock never moved apart. */
  now(): number {
    return this.base.now();
  }

  /** The client's time now ('' is the sandbox's). */
  of(clientId: string): number {
    if (clientId === '') return this.base.now();
    const own = this.own.get(clientId);
    if (this.base instanceof ManualClock) return own ?? this.base.now();
    return this.base.now() + (own ?? 0);
  }

  /** How far the client's clock runs ahead of the sandbox's. */
  ahead(clientId: string): number {
    return this.of(clientId) - this.now();
  }

  /** Every client clock that runs apart from the sandbox's, with its lead (for claims on the sandbox's clock). */
  leads(): ClockLead {
    const now = this.now();
    const leads = new Map<string, number>();
    for (const clientId of this.own.keys()) leads.set(clientId, this.of(clientId) - now);
    return leads;
  }

  /** Moves the client's clock on to `at`, never back ('' moves the sandbox's manual clock). */
  moveTo(clientId: string, at: number): void {
    if (clientId === '') {
      if (this.base instanceof ManualClock) this.base.set(at);
      return;
    }
    if (at <= this.of(clientId)) return;
    if (this.base instanceof ManualClock) this.own.set(clientId, at);
    else this.own.set(clientId, at - this.base.now());
  }

  /** Gives the client a clock of its own where it stands now, so a move of the sandbox's clock no longer moves it. */
  pin(clientId: string): void {
    if (clientId === '' || this.own.has(clientId)) return;
    this.own.set(clientId, this.base instanceof ManualClock ? this.base.now() : 0);
  }

  /** Keeps a real clock of the client at least `lead` ahead of the sandbox's (a jump); a manual one as `moveTo`. */
  keepAhead(clientId: string, lead: number): void {
    if (clientId === '' || this.base instanceof ManualClock) return this.moveTo(clientId, this.base.now() + lead);
    this.own.set(clientId, Math.max(this.own.get(clientId) ?? 0, lead));
  }

  /** Real milliseconds until the sandbox's clock reads `at` (real clock). */
  realDelayUntil(at: number): number {
    return this.base instanceof RealClock ? this.base.realDelayUntil(at) : Infinity;
  }

  /** The client's clock as its settings will keep it once an advance by `ms` has moved it on. */
  savedAfter(clientId: string, ms: number): ClientClock {
    return { offset_ms: this.base instanceof ManualClock ? 0 : this.ahead(clientId) + ms, now_ms: this.of(clientId) + ms };
  }

  /** The client's clock as its settings keep it; undefined while it runs with the sandbox's (unless `always`). */
  saved(clientId: string, always = false): ClientClock | undefined {
    const own = this.own.get(clientId);
    if (own === undefined && !always) return undefined;
    return { offset_ms: this.base instanceof ManualClock ? 0 : (own ?? 0), now_ms: this.of(clientId) };
  }

  /**
   * Runs on from the clocks a shared store keeps (another process moved them): each
   * client's and the sandbox's manual clock move on to the kept time, never back; a real
   * clock takes the kept pace.
   */
  adopt(kept: KeptClocks): void {
    if (this.base instanceof ManualClock) {
      if (kept.manualMs !== undefined) this.base.set(kept.manualMs);
    } else if (kept.real) {
      this.base.load(kept.real);
    }
    for (const [clientId, clock] of kept.clients) {
      const own = this.own.get(clientId);
      if (this.base instanceof ManualClock) this.own.set(clientId, Math.max(own ?? -Infinity, clock.now_ms));
      else this.own.set(clientId, Math.max(own ?? 0, clock.offset_ms));
    }
  }

  /**
   * Restores a client's clock from its settings: a manual clock stands where it was (or
   * at `notBefore`, --clock-start, if later); a real clock keeps its offset and never
   * restarts behind the time it was saved at (a faster --speed before the restart).
   */
  restore(clientId: string, kept: ClientClock, notBefore = -Infinity): void {
    if (this.base instanceof ManualClock) this.own.set(clientId, Math.max(kept.now_ms, notBefore));
    else this.own.set(clientId, Math.max(kept.offset_ms, kept.now_ms - this.base.now()));
  }
}
