import type { Clocks } from '../clock/index.js';
import { Unavailable } from '../shared/index.js';
import type { Storage } from '../store/index.js';
import { JobInterrupted, type JobKinds } from './kinds.js';
import type { Outcome, SchedulerOptions, Stamp } from './options.js';
import type { Running } from './running.js';
import type { ClaimedJob } from '../records/index.js';

/** How often a job that throws unexpectedly is run in all before it is dropped, and the first wait between tries (doubling). */
const JOB_ATTEMPTS = 5;
const FAILED_JOB_RETRY_MS = 60_000;
/** How often claims whose release failed (the store away) are released again (wall ms). */
export const RELEASE_RETRY_MS = 2_000;
/** A job's name in the runner's maps: its kind and key. */
const idOf = (job: ClaimedJob): string => `${job.kind}:${job.key}`;

/**
 * Runs one claimed job through its kind's handler and ends it: completed, given back
 * (not started before a stop, cut short, store away), or, when it failed unexpectedly,
 * due again later.
 */
export class JobRunner {
  /** Failures so far of jobs that threw unexpectedly, by kind and key (in memory: a restart gives each a fresh start). */
  private readonly failures = new Map<string, number>();
  /** Claims given back while the store could not take it, by kind and key: released again until it does. */
  private readonly unreleased = new Map<string, ClaimedJob>();
  /** Jobs dropped of clients not configured, by client, until told (`tellUnconfigured`). */
  private readonly unconfigured = new Map<string, number>();
  /** The clients not configured whose dropped jobs were told: once per client and process. */
  private readonly toldUnconfigured = new Set<string>();
  private retrying: NodeJS.Timeout | undefined;
  private releasing = false;

  constructor(
    private readonly storage: Storage,
    private readonly clocks: Clocks,
    private readonly kinds: JobKinds,
    readonly inFlight: Running,
    private readonly options: Pick<SchedulerOptions, 'onError' | 'onLate' | 'onDropped' | 'configured' | 'onUnconfigured'>,
    /** The scheduler is stopping: a job not started yet is given back, not run. */
    private readonly stopping: () => boolean = () => false,
    /** The clients whose advance is under way, with its target (see `Scheduler.advance`). */
    private readonly advancing: ReadonlyMap<string, number> = new Map(),
  ) {}

  /**
   * Gives a claim back. When the store cannot take it (away in an outage), the claim is
   * kept and released again every RELEASE_RETRY_MS until it can: left to its lease, it
   * would hold up an advance of its client on every replica for the lease's length.
   */
  async release(job: ClaimedJob): Promise<void> {
    try {
      await this.storage.jobs.release(job);
    } catch {
      this.unreleased.set(idOf(job), job);
      this.retrying ??= setInterval(() => void this.releaseKept(), RELEASE_RETRY_MS).unref();
    }
  }

  /** Stops releasing kept claims again (the scheduler stops; their leases end by themselves). */
  stop(): void {
    clearInterval(this.retrying);
    this.retrying = undefined;
  }

  private async releaseKept(): Promise<void> {
    if (this.releasing) return; // a round still waiting on the store
    this.releasing = true;
    try {
      for (const [id, job] of this.unreleased) {
        // Past its lease the claim frees itself, and this replica may hold the job again under a new claim: not to be released.
        if (job.lease_until > Date.now()) await this.storage.jobs.release(job);
        this.unreleased.delete(id);
      }
    } catch {
      return; // still away: the next round tries again
    } finally {
      this.releasing = false;
    }
    if (this.unreleased.size === 0) this.stop();
  }

  /**
   * Drops the claimed jobs of clients not configured on this sandbox (removed from the
   * store, without running: no handler could, and its records go by retention; its kind is
   * told, as of a job dropped after its last try), and answers the others. One that cannot
   * be removed (the store away) is given back, due.
   */
  async configuredOnly(jobs: ClaimedJob[]): Promise<ClaimedJob[]> {
    const { configured } = this.options;
    if (!configured || jobs.every((job) => configured(job.client_id))) return jobs;
    const kept: ClaimedJob[] = [];
    for (const job of jobs) {
      if (configured(job.client_id)) {
        kept.push(job);
        continue;
      }
      const removed = await this.storage.jobs.complete(job).then(() => true, () => false);
      if (!removed) {
        await this.release(job);
        continue;
      }
      if (!this.toldUnconfigured.has(job.client_id)) this.unconfigured.set(job.client_id, (this.unconfigured.get(job.client_id) ?? 0) + 1);
      // What waited for it does not wait for good: a delivery ends failed (recover sends it again should the client come back).
      await this.kinds.byKind.get(job.kind)?.dropped?.(job, 'unconfigured').catch((error: unknown) => this.options.onError?.(error, job.kind, job.key));
    }
    return kept;
  }

  /** Tells, once per client, how many jobs of a client not configured were dropped (at the end of the drain that first dropped some). */
  tellUnconfigured(): void {
    for (const [clientId, dropped] of this.unconfigured) {
      this.toldUnconfigured.add(clientId);
      this.options.onUnconfigured?.(clientId, dropped);
    }
    this.unconfigured.clear();
  }

  /** Reports a failure of the sandbox's own met while running `job` (with others: see `Rows`), as a job's unexpected error is. */
  report(error: unknown, job: ClaimedJob): void {
    this.options.onError?.(error, job.kind, job.key);
  }

  run(job: ClaimedJob, stamp: Stamp): Promise<Outcome> {
    return this.inFlight.track(job.client_id, this.stopping() ? this.giveBack(job) : this.runJob(job, stamp));
  }

  /**
   * A job claimed but not started when the scheduler stopped: its claim is released at
   * once, so another replica (or the next start) takes it without waiting for the lease.
   */
  private async giveBack(job: ClaimedJob): Promise<Outcome> {
    await this.release(job);
    return 'interrupted';
  }

  private async runJob(job: ClaimedJob, stamp: Stamp): Promise<Outcome> {
    try {
      // A job due within an advance under way (one a wake-up claimed just before it began) is one of the jump's: stamped with its due time.
      const jump = this.advancing.get(job.client_id);
      const at = stamp === 'due' || (jump !== undefined && job.due_at <= jump) ? job.due_at : Math.max(job.due_at, this.clocks.of(job.client_id));
      if (stamp === 'actual') this.options.onLate?.(job.kind, (at - job.due_at) / this.clocks.speed);
      if ((await this.kinds.byKind.get(job.kind)?.run(job, at)) !== 'completed') await this.storage.jobs.complete(job);
      if (this.failures.size > 0) this.failures.delete(idOf(job));
      return 'done';
    } catch (error) {
      // Giving the job back may fail too (the database went away): see `release`.
      if (error instanceof JobInterrupted) {
        await this.release(job);
        return 'interrupted';
      }
      if (error instanceof Unavailable) {
        await this.release(job);
        return 'unavailable';
      }
      this.options.onError?.(error, job.kind, job.key, { client: job.client_id, try: (this.failures.get(idOf(job)) ?? 0) + 1, tries: JOB_ATTEMPTS });
      return this.failed(job);
    }
  }

  /**
   * A job that failed unexpectedly is tried again later (1, 2, 4, 8 minutes of its
   * client's clock after it failed), so a passing fault does not leave an AWB ungenerated or a webhook
   * pending for good; after its fifth failure in this process (each replica of a shared
   * database counts its own) it is dropped, and its kind told (a delivery
   * is then marked failed, for recover). If even that cannot be saved, it is given back so
   * it is not lost until a restart.
   */
  private async failed(job: ClaimedJob): Promise<Outcome> {
    const id = idOf(job);
    const failures = (this.failures.get(id) ?? 0) + 1;
    if (failures < JOB_ATTEMPTS) {
      this.failures.set(id, failures);
      // Counted from when it failed: a job run long after its due time (the catch-up after a stop) would otherwise use its retries up at once.
      const retryAt = Math.max(job.due_at, this.clocks.of(job.client_id)) + FAILED_JOB_RETRY_MS * 2 ** (failures - 1);
      await this.storage.jobs.schedule({ kind: job.kind, key: job.key, client_id: job.client_id, due_at: retryAt }).catch(() => this.release(job));
      return 'done';
    }
    const completed = await this.storage.jobs.complete(job).then(
      () => true,
      async () => {
        await this.release(job);
        return false;
      },
    );
    // Only once it is gone: one given back is still due, runs again, and is dropped at its next failure (its count kept).
    if (!completed) return 'done';
    this.failures.delete(id);
    this.options.onDropped?.(job.kind, job.key, job.client_id);
    await this.kinds.byKind.get(job.kind)?.dropped?.(job, 'failed').catch((error: unknown) => this.options.onError?.(error, job.kind, job.key));
    return 'done';
  }
}
