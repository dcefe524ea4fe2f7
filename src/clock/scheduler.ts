import { randomBytes } from 'node:crypto';
import { Unavailable } from '../domain/errors.js';
import type { ClaimedJob, JobKind, Storage } from '../store/port.js';
import { ManualClock, RealClock, type Clock } from './clock.js';

/** Runs one due job. `at` is when it was due: use it, not the clock, for timestamps. */
export type JobHandler = (job: ClaimedJob, at: number) => Promise<void>;

export interface SchedulerOptions {
  /** How many jobs due at the same moment run at once. */
  concurrency?: number;
  /** How long a claim holds before another worker may take the job over (wall ms). */
  leaseMs?: number;
  onError?: (error: unknown, kind: string, key: string) => void;
}

/** Thrown by a handler whose work was cut short (shutdown): the job stays due, for the next start. */
export class JobInterrupted extends Error {
  override name = 'JobInterrupted';
}

/** How long to wait before trying again when the store cannot take writes. */
const UNAVAILABLE_RETRY_MS = 1_000;

/**
 * Runs the due jobs. Jobs are records in the store (`storage.jobs`) with a due time;
 * domain code schedules them inside its transactions. The scheduler asks the jobs
 * repository for the earliest due time, claims what is due, runs each job's handler
 * and completes it; so a restart resumes from the store, and start-up work is in
 * proportion to the pending jobs, not to the records.
 *
 * With a real clock a single unref'd timer waits for the earliest job; with a manual
 * clock nothing runs until `advance`.
 */
export class Scheduler {
  private readonly handlers = new Map<JobKind, JobHandler>();
  private readonly owner = `worker_${process.pid}_${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly storage: Storage,
    readonly clock: Clock,
    private readonly options: SchedulerOptions = {},
  ) {
    storage.onJobScheduled((dueAt) => {
      if (dueAt < this.armedAt) void this.arm();
    });
  }

  on(kind: JobKind, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  /** Runs every job due now (and those they make due), then resolves. */
  runDue(): Promise<void> {
    return this.exclusive(() => this.drain(this.clock.now()));
  }

  /**
   * Moves a manual clock on by `ms`, running every job that falls due on the way at
   * its own time, in order; resolves when all of them have run.
   */
  advance(ms: number): Promise<void> {
    const clock = this.clock;
    if (!(clock instanceof ManualClock)) throw new Error('advance needs a manual clock');
    return this.exclusive(async () => {
      const target = clock.now() + ms;
      await this.drain(target, (at) => clock.set(at));
      clock.set(target);
    });
  }

  /** Stops the timer and waits for running jobs; nothing runs afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.running.then(work, work);
    this.running = next.catch(() => undefined);
    return next;
  }

  /** Runs the jobs due by `until`, earliest due time first; all due at one time run together. */
  private async drain(until: number, moveTo?: (at: number) => void): Promise<void> {
    const limit = this.options.concurrency ?? 32;
    while (!this.stopped) {
      const next = await this.storage.jobs.nextDue();
      if (next === undefined || next > until) return;
      moveTo?.(next);
      const batch = await this.storage.jobs.claim({ until: next, limit, owner: this.owner, leaseMs: this.options.leaseMs ?? 60_000 });
      if (batch.length === 0) return;
      const outcomes = await Promise.all(batch.map((job) => this.run(job)));
      if (outcomes.includes('unavailable')) {
        this.retryLater();
        return;
      }
      if (outcomes.includes('interrupted')) return; // shutting down: what is left stays due
      // Let requests in between batches: a long advance must not hold the event loop.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private async run(job: ClaimedJob): Promise<'done' | 'unavailable' | 'interrupted'> {
    try {
      await this.handlers.get(job.kind)?.(job, job.due_at);
      await this.storage.jobs.complete(job);
      return 'done';
    } catch (error) {
      if (error instanceof JobInterrupted) {
        await this.storage.jobs.release(job);
        return 'interrupted';
      }
      if (error instanceof Unavailable) {
        await this.storage.jobs.release(job);
        return 'unavailable';
      }
      this.options.onError?.(error, job.kind, job.key);
      await this.storage.jobs.complete(job).catch(() => undefined);
      return 'done';
    }
  }

  private retryLater(): void {
    if (this.stopped || !(this.clock instanceof RealClock)) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = -Infinity;
    this.timer = setTimeout(() => this.fire(), UNAVAILABLE_RETRY_MS).unref();
  }

  /** Waits for the earliest due job (real clock only). */
  async arm(): Promise<void> {
    if (this.stopped || !(this.clock instanceof RealClock)) return;
    const at = await this.storage.jobs.nextDue();
    if (at === undefined || (this.timer && this.armedAt <= at)) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = at;
    const delay = Math.min(this.clock.realDelayUntil(at), 2 ** 31 - 1);
    this.timer = setTimeout(() => this.fire(), delay).unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    this.runDue()
      .catch((error: unknown) => this.options.onError?.(error, 'scheduler', 'runDue'))
      .finally(() => void this.arm());
  }
}
