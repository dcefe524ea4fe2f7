import { randomBytes } from 'node:crypto';
import { Unavailable } from '../domain/errors.js';
import type { ClaimedJob, JobKind, Storage } from '../store/port.js';
import { ManualClock, RealClock, type Clock } from './clock.js';

/** Runs one due job. `at` is the time it happened on the sandbox clock: use it, not the clock, for timestamps. */
export type JobHandler = (job: ClaimedJob, at: number) => Promise<void>;

export interface SchedulerOptions {
  /** How many jobs due at the same moment run at once (AWB, steps, retention). */
  concurrency?: number;
  /** How many webhook attempts run at once in all, and for one client. */
  webhookConcurrency?: { total: number; perClient: number };
  /** How long a claim holds before another worker may take the job over (wall ms). */
  leaseMs?: number;
  onError?: (error: unknown, kind: string, key: string) => void;
  /** Told how late (real ms after its due time) each job fired by the real clock's timer ran (metrics). */
  onLate?: (kind: JobKind, lateMs: number) => void;
}

/** Thrown by a handler whose work was cut short (shutdown): the job stays due, for the next start. */
export class JobInterrupted extends Error {
  override name = 'JobInterrupted';
}

/** How long to wait before trying again when the store cannot take writes. */
const UNAVAILABLE_RETRY_MS = 1_000;
/** Kinds that are quick and local (every kind but webhook): they run in order, and never wait behind a webhook attempt. */
const WORK: readonly JobKind[] = (['awb', 'step', 'retention'] satisfies Array<Exclude<JobKind, 'webhook'>>);
/** Kinds that wait on a client's receiver: they run beside the work, within concurrency caps. */
const WEBHOOKS: readonly JobKind[] = ['webhook'];
/** Defaults of `webhookConcurrency`. */
export const WEBHOOK_CONCURRENCY = { total: 64, perClient: 8 };

type Outcome = 'done' | 'unavailable' | 'interrupted';
/** Which time a job is stamped with: its due time (advance, catch-up at start), or the later of that and now (a job run late under load). */
type Stamp = 'due' | 'actual';

/**
 * Webhook attempts in flight, per client and in all: a client's slow or silent receiver
 * uses its own share and holds up nobody else.
 */
class AttemptPool {
  private readonly perClient = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(readonly caps: { total: number; perClient: number }) {}

  get room(): number {
    return this.caps.total - this.inFlight.size;
  }

  get busy(): boolean {
    return this.inFlight.size > 0;
  }

  /** Clients with no room left. */
  full(): Set<string> {
    const full = new Set<string>();
    for (const [client, n] of this.perClient) if (n >= this.caps.perClient) full.add(client);
    return full;
  }

  /** Attempts of this client in flight. */
  of(clientId: string): number {
    return this.perClient.get(clientId) ?? 0;
  }

  /** Runs `work` in a slot; `ended` runs once the slot is free again. */
  start(clientId: string, work: () => Promise<void>, ended: () => void): void {
    this.perClient.set(clientId, this.of(clientId) + 1);
    const running = work().finally(() => {
      const left = this.perClient.get(clientId)! - 1;
      if (left === 0) this.perClient.delete(clientId);
      else this.perClient.set(clientId, left);
      this.inFlight.delete(running);
      ended();
    });
    this.inFlight.add(running);
  }

  /** Resolves once no attempt is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }
}

/**
 * Runs the due jobs. Jobs are records in the store (`storage.jobs`) with a due time;
 * domain code schedules them inside its transactions. The scheduler asks the jobs
 * repository for the earliest due time, claims what is due, runs each job's handler
 * and completes it; so a restart resumes from the store, and start-up work is in
 * proportion to the pending jobs, not to the records.
 *
 * Two lanes: AWB generation, tracking steps and retention run in due order, in
 * batches with a yield to the event loop between them; webhook attempts, which wait on
 * receivers, run beside them in a pool capped in all and per client
 * (`webhookConcurrency`), so a silent receiver delays neither AWBs nor other clients.
 *
 * With a real clock a single unref'd timer waits for the earliest job, and a job run
 * late is stamped with the time it ran; with a manual clock nothing runs until
 * `advance`, which stamps each job with its due time and waits at each due time for
 * the attempts in flight.
 */
export class Scheduler {
  private readonly handlers = new Map<JobKind, JobHandler>();
  private readonly owner = `worker_${process.pid}_${randomBytes(4).toString('hex')}`;
  private readonly pool: AttemptPool;
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly storage: Storage,
    readonly clock: Clock,
    private readonly options: SchedulerOptions = {},
  ) {
    this.pool = new AttemptPool(options.webhookConcurrency ?? WEBHOOK_CONCURRENCY);
    storage.onJobScheduled((dueAt) => {
      if (dueAt < this.armedAt) void this.arm();
    });
  }

  on(kind: JobKind, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  /**
   * Runs every job due now (and those they make due), each stamped with its due time
   * (the catch-up at start), then resolves; the webhook attempts it started run on in
   * the pool (`settle()` waits for them), so no client's work waits behind a silent receiver.
   */
  runDue(): Promise<void> {
    return this.exclusive(async () => {
      await this.drain(this.clock.now(), { stamp: 'due', settle: false });
    });
  }

  /** Resolves once no webhook attempt is in flight. */
  settle(): Promise<void> {
    return this.pool.idle();
  }

  /**
   * Moves a manual clock on by `ms`, running every job that falls due on the way at
   * its own time, in order, and waiting at each due time for what runs then (webhook
   * attempts included); resolves when all of them have run.
   */
  advance(ms: number): Promise<void> {
    const clock = this.clock;
    if (!(clock instanceof ManualClock)) throw new Error('advance needs a manual clock');
    return this.exclusive(async () => {
      const target = clock.now() + ms;
      await this.drain(target, { stamp: 'due', settle: true, moveTo: (at) => clock.set(at) });
      clock.set(target);
    });
  }

  /** Stops the timer and waits for running jobs; nothing runs afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.pool.idle();
  }

  private exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.running.then(work, work);
    this.running = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs the jobs due by `until`, earliest due time first: at each due time, the work
   * lane's jobs together, and as many webhook attempts as the pool has room for.
   * With `settle`, waits for those attempts before the next due time.
   */
  private async drain(until: number, how: { stamp: Stamp; settle: boolean; moveTo?: (at: number) => void }): Promise<void> {
    const limit = this.options.concurrency ?? 32;
    const leaseMs = this.options.leaseMs ?? 60_000;
    /** Outcomes of the attempts this drain started. */
    const ended: Outcome[] = [];
    while (!this.stopped) {
      const next = await this.nextClaimable();
      if (next === undefined || next > until) {
        // What is left by `until` may be attempts of clients with no room: wait for them
        // (settle); else the pool wakes the scheduler as attempts end.
        if (how.settle && this.pool.busy) {
          await this.pool.idle();
          if (ended.splice(0).some((outcome) => outcome !== 'done')) break;
          continue;
        }
        break;
      }
      how.moveTo?.(next);
      const work = await this.storage.jobs.claim({ until: next, limit, owner: this.owner, leaseMs, kinds: WORK });
      const attempts =
        this.pool.room > 0
          ? await this.storage.jobs.claim({ until: next, limit: this.pool.room, owner: this.owner, leaseMs, kinds: WEBHOOKS, perClient: this.pool.caps.perClient, skipClients: this.pool.full() })
          : [];
      for (const job of attempts) {
        // A claim takes up to perClient of a client's jobs, on top of those in flight: the extra wait, due.
        if (this.pool.of(job.client_id) >= this.pool.caps.perClient) {
          await this.storage.jobs.release(job);
          continue;
        }
        let outcome: Outcome = 'done';
        this.pool.start(
          job.client_id,
          async () => {
            outcome = await this.run(job, how.stamp);
            ended.push(outcome);
          },
          () => this.afterAttempt(outcome, how.settle),
        );
      }
      if (work.length === 0 && attempts.length === 0) break;
      const outcomes = await Promise.all(work.map((job) => this.run(job, how.stamp)));
      if (how.settle) await this.pool.idle();
      outcomes.push(...ended.splice(0));
      if (outcomes.includes('unavailable')) {
        this.retryLater();
        break;
      }
      if (outcomes.includes('interrupted')) return; // shutting down: what is left stays due
      // Let requests in between batches: a long advance must not hold the event loop.
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (how.settle) await this.pool.idle();
  }

  /** The earliest due time of a job that can be claimed now: work, or attempts of clients with room in the pool. */
  private nextClaimable(): Promise<number | undefined> {
    return this.pool.room > 0 ? this.storage.jobs.nextDue({ skipClients: this.pool.full() }) : this.storage.jobs.nextDue({ kinds: WORK });
  }

  private async run(job: ClaimedJob, stamp: Stamp): Promise<Outcome> {
    try {
      const at = stamp === 'due' ? job.due_at : Math.max(job.due_at, this.clock.now());
      if (stamp === 'actual') this.options.onLate?.(job.kind, (at - job.due_at) / this.clock.speed);
      await this.handlers.get(job.kind)?.(job, at);
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
      // Done with it; if even that cannot be saved, give it back so it is not lost until a restart.
      await this.storage.jobs.complete(job).catch(() => this.storage.jobs.release(job).catch(() => undefined));
      return 'done';
    }
  }

  /** An attempt ended, leaving room in the pool: let the next one in (real clock). */
  private afterAttempt(outcome: Outcome, settling: boolean): void {
    if (settling) return; // the drain that started it goes on
    if (outcome === 'unavailable') this.retryLater();
    else if (outcome === 'done') void this.arm();
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
    // Webhook attempts of clients with no room are let in as attempts end (afterAttempt), not by the timer.
    const at = await this.nextClaimable();
    if (at === undefined || (this.timer && this.armedAt <= at)) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = at;
    const delay = Math.min(this.clock.realDelayUntil(at), 2 ** 31 - 1);
    this.timer = setTimeout(() => this.fire(), delay).unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    this.exclusive(() => this.drain(this.clock.now(), { stamp: 'actual', settle: false }))
      .catch((error: unknown) => this.options.onError?.(error, 'scheduler', 'runDue'))
      .finally(() => void this.arm());
  }
}
