import { randomBytes } from 'node:crypto';
import { Clocks, LATEST_CLOCK_MS } from '../clock/index.js';
import type { Clock, KeepClock, ManualClock, RealClock } from '../clock/index.js';
import { OneAtATime, Unavailable } from '../shared/index.js';
import type { Storage } from '../store/index.js';
import { Drainer } from './drain.js';
import { JobKinds, type JobKindSpec } from './kinds.js';
import { LeftToOthers } from './left-to-others.js';
import type { SchedulerOptions } from './options.js';
import { JobPool } from './pool.js';
import { Rows } from './rows.js';
import { JobRunner } from './runner.js';
import { Running } from './running.js';
import { LoopSlices } from './slices.js';
import { WakeUps } from './wake-ups.js';

/** An advance the sandbox's stop ended before its due jobs had all run. */
const ADVANCE_CUT_BY_STOP =
  'The sandbox is stopping: this advance ended before all that fell due on the way had run. The clock stands at its target, and what was left stays due: it runs at the next start or the next advance ({"ms": 0} will do), each at its own time.';

/**
 * Runs the due jobs. Jobs are records in the store (`storage.jobs`) with a due time on
 * their client's clock; domain code schedules them inside its transactions. The
 * scheduler asks the jobs repository for the earliest due time, claims what is due,
 * runs each job's handler and completes it; so a restart resumes from the store, and
 * start-up work is in proportion to the pending jobs, not to the records.
 *
 * The scheduler knows no kind of job by name: each feature registers its own kinds
 * (`register`), with the handler that runs them and how they run.
 *
 * Each client has its own clock (`Clocks`): the timer and the catch-up at start claim
 * on the sandbox's clock with each client's lead (`ahead`), so every client's jobs fall
 * due at the right wall time; an advance moves one client's clock and claims only its jobs.
 *
 * Two lanes: local work runs in due order, in batches, taking slices of the event loop
 * with the requests (see `LoopSlices`); the pooled kinds, which wait on something outside
 * (a partner's receiver), run beside it in a pool capped in all and per client, so a
 * silent receiver delays neither the local work nor other clients.
 *
 * With a real clock a single unref'd timer waits for the earliest job (`WakeUps`), and a
 * job run late is stamped with its client's time when it ran; an advance (manual clock,
 * or a jump of a real one) stamps each job with its due time and waits at each due time
 * for the client's jobs running then, pooled ones included.
 *
 * @example
 * const scheduler = new Scheduler(storage, clocks);
 * scheduler.register({ kind: 'step', run: (job, at) => playStep(job.key, at) });
 * await scheduler.advance('client-a', 60_000); // runs client-a's steps due within the minute
 */
export class Scheduler {
  readonly clocks: Clocks;
  private readonly kinds = new JobKinds();
  private readonly pool = new JobPool();
  private readonly inFlight = new Running();
  /** The advances of each client: one at a time per client. */
  private readonly advances = new OneAtATime();
  /** The clients whose advance is under way, with its target on their clock (see `advance`). */
  private readonly advancing = new Map<string, number>();
  private readonly wakeUps: WakeUps;
  private readonly drainer: Drainer;
  private readonly onError: SchedulerOptions['onError'];
  private running: Promise<void> = Promise.resolve();

  /** Runs each claimed job, and gives back claims (again, while the store is away). */
  private readonly runner: JobRunner;

  constructor(
    private readonly storage: Storage,
    clock: Clocks | RealClock | ManualClock,
    options: SchedulerOptions = {},
  ) {
    const clocks = (this.clocks = clock instanceof Clocks ? clock : new Clocks(clock));
    this.onError = options.onError;
    const wallClock = options.wallClock ?? (() => performance.now());
    const shared = storage.jobs.heldElsewhere !== undefined;
    const { kinds, pool } = this;
    const runner = (this.runner = new JobRunner(storage, clocks, kinds, this.inFlight, options, () => this.wakeUps.stopped, this.advancing));
    const leftToOthers = new LeftToOthers(clocks, runner, options);
    this.wakeUps = new WakeUps({
      clocks,
      pool,
      options,
      nextClaimable: () => this.drainer.nextClaimable(this.drainer.scope(undefined)),
      leadOf: (clientId) => leftToOthers.lead(clientId),
      wake: () => this.exclusive(() => this.drainDue('actual')),
    });
    const rows = new Rows(storage, kinds, runner, shared);
    const slices = new LoopSlices(wallClock);
    const owner = `worker_${process.pid}_${randomBytes(4).toString('hex')}`;
    this.drainer = new Drainer({ storage, clocks, kinds, pool, runner, rows, slices, owner, shared, wallClock, options, leftToOthers, advancing: this.advancing }, this.wakeUps);
    storage.onJobScheduled(this.wakeUps.scheduled);
  }

  /** The sandbox's clock (sandbox-wide work). */
  get clock(): Clock {
    return this.clocks;
  }

  /**
   * Registers a kind of job: its handler, and how its jobs run (see `JobKindSpec`). A
   * feature registers its kinds before the scheduler starts (`runDue`, `arm`).
   */
  register(spec: JobKindSpec): void {
    this.kinds.register(spec);
    if (spec.concurrency) this.pool.caps = spec.concurrency;
  }

  /**
   * Runs every job due now on its client's clock (and those they make due), each stamped
   * with its due time (the catch-up at start), then resolves; the pooled jobs it started
   * run on in the pool (`settle()` waits for them), so no client's work waits behind a
   * silent receiver.
   */
  runDue(): Promise<void> {
    const drained = this.exclusive(() => this.drainDue('due'));
    // A manual clock has no wake-ups to let in the pooled jobs this drain had no room for
    // (a client's webhooks past its share of the pool): each client's go on as an advance by 0.
    if (this.clocks.mode === 'manual') void drained.then(() => this.catchUpEach(), () => undefined);
    return drained;
  }

  /** Resolves once no pooled job is in flight. */
  settle(): Promise<void> {
    return this.pool.idle();
  }

  /**
   * Moves one client's clock on by `ms` (a manual clock, or a jump of a real one),
   * running every job of that client that falls due on the way at its own time, in
   * order, and waiting at each due time for what runs then (pooled jobs included);
   * resolves when none of its jobs due by the target is unfinished. Other clients' clocks
   * and jobs are untouched. Advances of one client run one at a time; '' moves the
   * sandbox's own clock (sandbox-wide work). `keep`, when given, keeps the client's clock
   * at each due time before the clock moves there and its jobs run (a shared store: see
   * ClockService.advance).
   */
  advance(clientId: string, ms: number, keep?: KeepClock): Promise<void> {
    const work = async (): Promise<void> => {
      const lead = this.clocks.ahead(clientId);
      const target = this.clocks.of(clientId) + ms;
      const moveTo = async (at: number): Promise<void> => {
        if (keep && clientId !== '') await keep(clientId, at);
        this.clocks.moveTo(clientId, at);
      };
      // Its jobs are the advance's to run, in due order, each at its due time: a real clock's
      // wake-up, which would stamp one with the client's time when it ran, leaves them alone.
      this.advancing.set(clientId, target);
      try {
        await this.drainer.drain({ clientId, until: target, stamp: 'due', settle: true, moveTo });
      } finally {
        this.advancing.delete(clientId);
      }
      // A stop ends the drain between jobs: an answer of success would say that all that fell due ran.
      const left = this.wakeUps.stopped ? await this.storage.jobs.nextDue({ clientId }) : undefined;
      // A manual clock stands at the target; a real one has jumped by `ms` (and ran on meanwhile). So
      // also after a stop: what was left is due at the next start's catch-up, as after a crash.
      if (this.clocks.mode === 'manual') this.clocks.moveTo(clientId, target);
      else this.clocks.keepAhead(clientId, lead + ms);
      if (left !== undefined && left <= target) throw new Unavailable(ADVANCE_CUT_BY_STOP);
    };
    // Jobs of a real clock that jumped are due earlier in wall time now.
    return this.advances.run(clientId, work, () => void this.arm());
  }

  /** Moves every client's clock on by `ms`, and the sandbox's (an admin's advance of all): each as `advance` does. */
  async advanceAll(ms: number, keep?: KeepClock): Promise<void> {
    // Each client's target is its own time + ms, whenever its advance starts: not the sandbox's, moved meanwhile.
    for (const clientId of this.clocks.clients) this.clocks.pin(clientId);
    // A client whose own advances took it near the latest time a clock may show stops there (the sandbox's own clock is checked by the caller).
    const by = (clientId: string): number => (clientId === '' ? ms : Math.max(0, Math.min(ms, LATEST_CLOCK_MS - this.clocks.of(clientId))));
    // Every advance ends before the first failure is told: the caller saves the clocks, and a shared store's locks are held till then.
    const ended = await Promise.allSettled([...this.clocks.clients, ''].map((clientId) => this.advance(clientId, by(clientId), keep)));
    const failed = ended.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Waits for the earliest due job of any client, in the sandbox clock's terms (real clock only). */
  arm(): Promise<void> {
    return this.wakeUps.arm();
  }

  /** Arms the timer afresh (the clock's speed changed: the wait for the same due time is another). */
  rearm(): void {
    this.wakeUps.rearm();
  }

  /**
   * Stops claiming and waits for the jobs running: a job already started (a webhook attempt
   * waiting on its receiver included) finishes and is recorded as at any other time; one
   * claimed but not started yet is given back at once (see `JobRunner`). Nothing runs afterwards.
   */
  async stop(): Promise<void> {
    this.wakeUps.stop();
    await this.running;
    await this.advances.idle();
    await this.pool.idle();
    this.runner.stop();
  }

  /**
   * Runs each client's jobs still due by its clock as an advance by 0 runs them, waiting for
   * room in the pool, in the background (a stop ends them). Only those due at the catch-up:
   * another client's job that falls due later waits for that client's advance.
   */
  private async catchUpEach(): Promise<void> {
    for (const clientId of new Set([...this.clocks.clients, ...this.clocks.leads().keys()])) {
      if (this.wakeUps.stopped) return;
      const due = await this.storage.jobs.nextDue({ clientId }).catch(() => undefined);
      if (due === undefined || due > this.clocks.of(clientId)) continue;
      this.advance(clientId, 0).catch((error: unknown) => {
        if (!(error instanceof Unavailable)) this.onError?.(error, 'scheduler', 'runDue');
      });
    }
  }

  /** Every client's jobs due now on the sandbox's clock, with the clocks as a shared store keeps them. */
  private async drainDue(stamp: 'due' | 'actual'): Promise<void> {
    await this.drainer.refreshClocks();
    await this.drainer.drain({ until: this.clocks.now(), stamp, settle: false });
  }

  private exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.running.then(work, work);
    this.running = next.catch(() => undefined);
    return next;
  }
}
