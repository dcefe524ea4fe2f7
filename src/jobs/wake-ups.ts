import type { Clocks } from '../clock/index.js';
import { Unavailable } from '../shared/index.js';
import type { DrainHooks } from './drain.js';
import type { Outcome, SchedulerOptions } from './options.js';
import type { JobPool } from './pool.js';

/** How long to wait before trying again when the store cannot take writes. */
const UNAVAILABLE_RETRY_MS = 1_000;

/** What the wake-ups work with, from the scheduler. */
export interface WakeUpParts {
  clocks: Clocks;
  pool: JobPool;
  /** The earliest due time of a job that can be claimed now, on the sandbox's clock. */
  nextClaimable(): Promise<number | undefined>;
  /** How far a client's jobs are due ahead of the sandbox's clock, as the claims see it. */
  leadOf(clientId: string): number;
  /** Runs every client's due jobs, stamped with the time they run (a wake-up's drain). */
  wake(): Promise<void>;
  options: Pick<SchedulerOptions, 'pollMs' | 'onError'>;
}

/**
 * The real clock's wake-ups: a single unref'd timer waits for the earliest due job of any
 * client, in the sandbox clock's terms, and its drain runs what is due then. A manual
 * clock has none: its jobs run as it is advanced.
 */
export class WakeUps implements DrainHooks {
  stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;
  /**
   * A wake-up's drain is waiting for its slice or running: it claims what falls due
   * meanwhile, and looks for the next due time when it ends, so a wake-up armed meanwhile
   * would only queue one more drain behind it (one per pooled job that ended, run one
   * after another once a load stopped).
   */
  private waking = false;

  constructor(private readonly parts: WakeUpParts) {}

  /** A job was scheduled (here, or told by another replica): wakes up for it if it falls due before the timer. */
  readonly scheduled = (dueAt: number, clientId: string): void => {
    const { pool } = this.parts;
    const at = dueAt - this.parts.leadOf(clientId);
    if (at >= this.armedAt) return;
    // While the client's pooled jobs have no room, its job may be one the wake-up could
    // not run: the look-up, which leaves those out, says when to wake.
    if (pool.room > 0 && pool.of(clientId) < pool.caps.perClient) this.armFor(at);
    else void this.arm();
  };

  /** Waits for the earliest due job of any client, in the sandbox clock's terms (real clock only). */
  async arm(): Promise<void> {
    const { clocks, options } = this.parts;
    if (this.stopped || clocks.mode !== 'real' || this.waking) return;
    // Pooled jobs of clients with no room are let in as pooled jobs end (pooledEnded), not by the timer.
    let found: number | undefined;
    try {
      found = await this.parts.nextClaimable();
    } catch (error) {
      // The store is away (or failed): look again shortly; a timer's promise must not reject unheard.
      if (!(error instanceof Unavailable)) options.onError?.(error, 'scheduler', 'arm');
      this.retryLater();
      return;
    }
    const { pollMs } = options;
    if (found === undefined && pollMs === undefined) return;
    const at = found ?? Infinity;
    if (this.timer && this.armedAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = at;
    const delay = Math.min(at === Infinity ? Infinity : clocks.realDelayUntil(at), pollMs ?? Infinity, 2 ** 31 - 1);
    this.timer = setTimeout(() => this.fire(), delay).unref();
  }

  /** Arms the timer afresh (the clock's speed changed: the wait for the same due time is another). */
  rearm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
    void this.arm();
  }

  retryLater(): void {
    if (this.stopped || this.parts.clocks.mode !== 'real') return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = -Infinity;
    this.timer = setTimeout(() => this.fire(), UNAVAILABLE_RETRY_MS).unref();
  }

  /** A pooled job ended, leaving room in the pool: let the next one in (real clock). */
  pooledEnded(outcome: Outcome, settling: boolean): void {
    if (settling) return; // the drain that started it goes on
    if (outcome === 'unavailable') this.retryLater();
    else if (outcome === 'done') void this.arm();
  }

  /** No more wake-ups. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /**
   * Arms the timer for a job that falls due at `at`, earlier than the timer waits for: the
   * due time is known, so no look-up of the store. The jobs falling due while a drain runs
   * wait for one wake-up and its drain, and the look-up after the drain (see `fire`) finds
   * what else is due: a look-up per job scheduled would cost a query per create under load.
   */
  private armFor(at: number): void {
    const { clocks } = this.parts;
    if (this.stopped || clocks.mode !== 'real' || this.waking) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = at;
    const delay = Math.min(clocks.realDelayUntil(at), 2 ** 31 - 1);
    this.timer = setTimeout(() => this.fire(), delay).unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    if (this.waking) return; // the drain waiting or running looks again when it ends
    this.waking = true;
    this.parts
      .wake()
      .catch((error: unknown) => this.parts.options.onError?.(error, 'scheduler', 'runDue'))
      .finally(() => {
        this.waking = false;
        void this.arm();
      });
  }
}
