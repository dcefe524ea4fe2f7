import { JOB_KINDS, type ClaimedJob, type JobKind } from '../records/index.js';

/**
 * Runs one due job. `at` is the time it happened on its client's clock: use it, not the
 * clock, for timestamps. A handler that completes the job in its own transaction (with
 * `tx.jobs.complete(job)`, so the job ends with what it did) answers 'completed'; else the
 * scheduler completes it after.
 */
export type JobHandler = (job: ClaimedJob, at: number) => Promise<void | 'completed'>;

/** Why a job was dropped: its tries failed, or its client is not configured on this sandbox. */
export type DropReason = 'failed' | 'unconfigured';

/** Thrown by a handler whose work was cut short (shutdown): the job stays due, for the next start. */
export class JobInterrupted extends Error {
  override name = 'JobInterrupted';
}

/**
 * Thrown by a handler that cannot do its job in this process for a reason its message
 * names (its client is not configured here): a failure like any other, tried again later
 * and dropped at its last try, but logged as that message alone, not with a stack.
 */
export class JobCannotRun extends Error {
  override name = 'JobCannotRun';
}

/** How many jobs of a pooled kind run at once, in all and of one client. */
export interface PoolCaps {
  total: number;
  perClient: number;
}

/**
 * A kind of job as its feature registers it with the scheduler.
 *
 * @example
 * scheduler.register({ kind: 'awb', run: (job, at) => generateAwb(job.key, at), drawsInOrder: true });
 * scheduler.register({ kind: 'webhook', run: (job, at) => attempt(job.key, at), concurrency: { total: 64, perClient: 8 } });
 */
export interface JobKindSpec {
  kind: JobKind;
  run: JobHandler;
  /**
   * For a kind that waits on something outside the sandbox (a partner's receiver): its
   * jobs run in a pool beside the local work, at most this many at once, so a slow or
   * silent receiver delays neither the local work nor other clients. Every pooled kind
   * shares the one pool. Without it the kind is local work: quick, run in due order, in
   * batches, in slices of the event loop.
   */
  concurrency?: PoolCaps;
  /**
   * Its handler draws numbers (AWBs) that must follow the order its jobs were claimed in,
   * also when they run side by side: each job takes its place in a `NumberingOrder`
   * (see `inOrder`).
   */
  drawsInOrder?: boolean;
  /**
   * Its handler does all its work in one transaction of the store (and the job's
   * completion with it) and waits on nothing else: on a store that offers it, a row of
   * such jobs runs as the parts of one unit of work, one commit for the row (see `Rows`).
   */
  oneTransaction?: boolean;
  /**
   * Called once a job of the kind is dropped (see JobRunner): after its last failed try, or
   * unrun as its client is not configured here. So that what waited for it does not wait
   * for good: a delivery is marked failed, which recover sends again. Its own failure is
   * logged, not retried.
   */
  dropped?: (job: ClaimedJob, why: DropReason) => Promise<void>;
}

/**
 * The kinds of job the features registered, and the two lanes they fall in: the pooled
 * kinds and the local work, which is every other kind, registered or not (a job of a
 * kind nobody registered is completed without running).
 */
export class JobKinds {
  private readonly specs = new Map<JobKind, JobKindSpec>();
  /** Each registered kind's spec (read once per job run). */
  readonly byKind: ReadonlyMap<JobKind, JobKindSpec> = this.specs;
  /** The kinds of local work, as claims name them. */
  work: readonly JobKind[] = JOB_KINDS;
  /** The kinds that run in the pool, as claims name them. */
  pooled: readonly JobKind[] = [];
  /** The pool's caps: those of the pooled kinds. */
  caps: PoolCaps | undefined;

  /** Registers a kind (again: its new spec replaces the old). */
  register(spec: JobKindSpec): void {
    const { concurrency } = spec;
    if (concurrency && this.caps && (this.caps.total !== concurrency.total || this.caps.perClient !== concurrency.perClient)) {
      throw new Error(`Job kind ${spec.kind} asks for a pool of ${concurrency.total} (${concurrency.perClient} per client), but pooled kinds share one pool of ${this.caps.total} (${this.caps.perClient} per client).`);
    }
    this.specs.set(spec.kind, spec);
    if (concurrency) this.caps = concurrency;
    const pooled = [...this.specs.values()].filter((s) => s.concurrency !== undefined).map((s) => s.kind);
    this.pooled = pooled;
    this.work = JOB_KINDS.filter((kind) => !pooled.includes(kind));
  }
}
