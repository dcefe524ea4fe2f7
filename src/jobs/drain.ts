import type { Clocks } from '../clock/index.js';
import type { Storage } from '../store/index.js';
import type { JobKinds } from './kinds.js';
import { outsideOrder } from './numbering-order.js';
import type { Outcome, SchedulerOptions, Stamp } from './options.js';
import type { JobPool } from './pool.js';
import type { Rows } from './rows.js';
import type { JobRunner } from './runner.js';
import type { LeadsLeaving, LeftToOthers } from './left-to-others.js';
import type { LoopSlices } from './slices.js';
import type { ClaimedJob, ClaimOptions } from '../records/index.js';
import { Unavailable } from '../shared/index.js';

/** An advance's answer when jobs that fell due on the way could not record their work. */
const ADVANCE_UNSAVED =
  'The advance stopped part-way, at the time GET /__sandbox/clock shows: some of what fell due there could not be saved, as the store cannot save changes right now (GET /__sandbox/health says why). ' +
  'That work is still due: it runs at the next advance ({"ms": 0} will do) once the store takes writes, or at the next start; advance again for the rest of the way, if any.';
/**
 * How long the store may stay unable to take writes while an advance waits for its jobs
 * before the advance answers 503 (wall ms). A webhook attempt whose outcome cannot be
 * saved keeps trying to save it for most of its lease (it must not be sent twice), and an
 * advance that waited for that would answer only when the store came back, or the better
 * part of a minute later; the attempt goes on trying in the background either way.
 */
const UNSAVED_AFTER_MS = 2_000;
/** How often an advance waiting for its jobs looks at the store's health (wall ms). */
const HEALTH_LOOK_MS = 250;
/** How often an advance looks again for its client's jobs that another replica holds (wall ms, growing). */
const HELD_ELSEWHERE_POLL_MS = [10, 20, 50, 100, 200];
/** How many empty claims in a row an advance takes on a shared store, while a job is due, before it gives up (~5 s). */
const EMPTY_CLAIM_TRIES = 30;
/**
 * Most jobs of local work of one client in a claim when they run one after another (see
 * `Rows`), so a partner with a thousand jobs due at once makes each batch no longer than
 * this for the partners due just after it; side by side, four times as many.
 */
const WORK_PER_CLIENT = 8;
/** How far past the earliest due job a real-clock wake-up claims at once (sandbox ms; see `drainNow`). */
const CLAIM_WINDOW_MS = 1_000;

/**
 * Which jobs a drain looks at: one client's on its own clock (an advance), or every
 * client's on the sandbox's clock, each shifted by its lead, but for the clients whose
 * advance is under way (their jobs are its own to run).
 */
type Scope = Pick<ClaimOptions, 'clientId' | 'ahead' | 'skipClients'>;

/** Both sets of clients to leave out of a claim. */
const skipping = (a: ReadonlySet<string> | undefined, b: ReadonlySet<string>): ReadonlySet<string> => (a === undefined || a.size === 0 ? b : b.size === 0 ? a : new Set([...a, ...b]));

/** One run through the due jobs. */
export interface Drain {
  /** The client whose clock moves (an advance); undefined: every client's due jobs (the timer, the catch-up at start). */
  clientId?: string;
  /** Due times up to here: on the client's clock, or on the sandbox's. */
  until: number;
  stamp: Stamp;
  /** Wait at each due time for the client's jobs running then (an advance). */
  settle: boolean;
  /** Moves the client's clock to a due time before its jobs there run (an advance; on a shared store it keeps the time there first). */
  moveTo?: (at: number) => void | Promise<void>;
}

/** What a drain tells the real clock's wake-ups, and asks them. */
export interface DrainHooks {
  /** Nothing runs any more (the scheduler stopped). */
  readonly stopped: boolean;
  /** The store cannot take writes: look again a little later. */
  retryLater(): void;
  /** A pooled job a drain started has ended, leaving room in the pool. */
  pooledEnded(outcome: Outcome, settling: boolean): void;
}

/** What a drain works with, from the scheduler. */
export interface DrainParts {
  storage: Storage;
  clocks: Clocks;
  kinds: JobKinds;
  pool: JobPool;
  runner: JobRunner;
  rows: Rows;
  slices: LoopSlices;
  /** Who claims: this process's worker id. */
  owner: string;
  /** Whether other processes share the store (and may hold this process's clients' jobs). */
  shared: boolean;
  wallClock: () => number;
  options: Pick<SchedulerOptions, 'concurrency' | 'leaseMs' | 'refreshClocks'>;
  /** The jobs of clients this replica lacks, left to the others a while. */
  leftToOthers: LeftToOthers;
  /** The clients whose advance is under way, with its target on their clock. */
  advancing: ReadonlyMap<string, number>;
}

/**
 * Claims the due jobs and runs them, earliest due time first: at each due time, the local
 * work's jobs together, and as many pooled jobs as the pool has room for. With `settle`
 * (one client's advance of its clock through its due times), waits for that client's jobs
 * before the next due time, and for room in the pool when its pooled jobs due by `until`
 * have none.
 */
export class Drainer {
  constructor(
    private readonly parts: DrainParts,
    private readonly hooks: DrainHooks,
  ) {}

  drain(how: Drain): Promise<void> {
    const { storage } = this.parts;
    // Outside any job's numbering order: a wake-up armed from inside a job (its commit announced a new one) must not inherit it.
    // A pooled job it started may end after it (an advance stopped by an outage): the wake-ups see to that one.
    const run = { over: false };
    const drain = (): Promise<void> =>
      this.drainNow(how, run).finally(() => {
        run.over = true;
        this.parts.runner.tellUnconfigured();
      });
    return outsideOrder(() => (storage.background ? storage.background(drain) : drain()));
  }

  /** The earliest due time of a job that can be claimed now: local work (a client's whose pooled jobs have no room too), or pooled jobs of clients with room. */
  async nextClaimable(scope: Scope): Promise<number | undefined> {
    const { pool, storage, kinds } = this.parts;
    const full = pool.room > 0 ? pool.full() : undefined;
    const any = full && (await storage.jobs.nextDue({ ...scope, skipClients: skipping(scope.skipClients, full) }));
    if (full?.size === 0) return any;
    const local = await storage.jobs.nextDue({ ...scope, kinds: kinds.work });
    return any === undefined || (local !== undefined && local < any) ? local : any;
  }

  /** Claims on one client's clock, or on the sandbox's with every client's lead (see LeftToOthers). */
  scope(clientId: string | undefined): Scope {
    return this.scopeLeaving(clientId).scope;
  }

  /** The scope, and on the sandbox's clock the leads it has, for LeftToOthers to tell its claims by. */
  private scopeLeaving(clientId: string | undefined): { scope: Scope; leads?: LeadsLeaving } {
    const { advancing } = this.parts;
    if (clientId !== undefined) return { scope: { clientId } };
    const leads = this.parts.leftToOthers.leads();
    const { ahead } = leads;
    return { scope: advancing.size === 0 ? { ahead } : { ahead, skipClients: new Set(advancing.keys()) }, leads };
  }

  /** Brings the clocks up to what a shared store keeps; a store that cannot answer leaves them as they are (its claims fail too). */
  async refreshClocks(): Promise<void> {
    const { refreshClocks } = this.parts.options;
    if (refreshClocks) await refreshClocks().catch(() => undefined);
  }

  private async drainNow(how: Drain, run: { readonly over: boolean }): Promise<void> {
    const { storage, clocks, kinds, pool, runner, rows, slices, owner, shared, wallClock, options } = this.parts;
    const { inFlight } = runner;
    const limit = options.concurrency ?? 32;
    const leaseMs = options.leaseMs ?? 60_000;
    const { clientId } = how;
    const settling = how.settle && clientId !== undefined;
    /** Outcomes of the pooled jobs this drain started. */
    const ended: Outcome[] = [];
    /** Looks in a row at the client's jobs another replica holds (the wait grows). */
    let waited = 0;
    /** Claims in a row that came back empty though a job was due (shared stores). */
    let emptyClaims = 0;
    // Jobs stamped with the time they run (the timer's wake-ups) are claimed in batches:
    // everything due, in rounds (each client's earliest first) up to its share of a claim, where
    // a claim reads only the heads of each client's queue (`claimsPerClient`), so one
    // client's backlog never makes another's due jobs wait behind it (both adapters); a
    // store whose claim would read the due rows to find the clients claims those due
    // within CLAIM_WINDOW_MS of the earliest, so a claim looks at no more than that window
    // of a backlog. Stamped with their due time (an advance, the catch-up at start),
    // they run due time by due time, so the jobs each one makes due run at their place.
    const batched = how.stamp === 'actual' && !settling;
    const perClient = batched && storage.claimsPerClient === true;
    const window = perClient ? Infinity : CLAIM_WINDOW_MS;
    let until = how.until;
    let clocksRead = wallClock();
    while (!this.hooks.stopped) {
      // There, what falls due while a backlog drains is claimed beside it, not after it;
      // on a shared store with the clocks as the other replicas left them (read once a second).
      if (perClient) {
        if (shared && wallClock() - clocksRead >= 1_000) {
          await this.refreshClocks();
          clocksRead = wallClock();
        }
        until = Math.max(until, clocks.now());
      }
      const { scope, leads } = this.scopeLeaving(clientId);
      const earliest = await this.nextClaimable(scope);
      const next = batched && earliest !== undefined && earliest <= until ? Math.min(until, earliest + window) : earliest;
      if (next === undefined || next > until) {
        if (settling) {
          // The client's jobs still running (whoever claimed them), then its pooled jobs that wait for room.
          if (inFlight.busy(clientId)) {
            await this.whileSaving(inFlight.idle(clientId));
            if (ended.splice(0).some((outcome) => outcome !== 'done')) break;
            continue;
          }
          const due = await storage.jobs.nextDue({ clientId });
          if (due !== undefined && due <= until && pool.busy) {
            await this.whileSaving(pool.slotFreed());
            continue;
          }
          // Its jobs due by the target that another replica runs (whose claim lapses if that replica died).
          if (shared && (await this.heldElsewhere(clientId, until, waited++))) continue;
        }
        break;
      }
      // Before the clock moves on to `next`: the client's jobs due earlier that another replica runs.
      if (settling && shared && (await this.heldElsewhere(clientId, next - 1, waited++))) continue;
      waited = 0;
      await how.moveTo?.(next);
      const sideBySide = rows.sideBySideFor(how.stamp);
      const claimed = await storage.jobs.claim({ until: next, limit: sideBySide ? limit * 2 : limit, owner, leaseMs, kinds: kinds.work, perClient: sideBySide ? WORK_PER_CLIENT * 4 : WORK_PER_CLIENT, ...scope });
      const claimedPooled =
        pool.room > 0 && kinds.pooled.length > 0
          ? await storage.jobs.claim({ until: next, limit: pool.room, owner, leaseMs, kinds: kinds.pooled, perClient: pool.caps.perClient, ...scope, skipClients: skipping(scope.skipClients, pool.full()) })
          : [];
      // Jobs of clients no longer configured are dropped here, not run (nothing could run them);
      // on a shared store those of a client this replica lacks are left to the others a while.
      const mine = (jobs: ClaimedJob[]) => (leads === undefined ? jobs : this.parts.leftToOthers.mine(jobs, next, leads));
      const work = await runner.configuredOnly(await mine(claimed));
      const pooled = await runner.configuredOnly(await mine(claimedPooled));
      for (const job of pooled) {
        // A claim takes up to perClient of a client's jobs, on top of those in flight: the extra wait, due.
        if (pool.of(job.client_id) >= pool.caps.perClient) {
          await runner.release(job);
          continue;
        }
        let outcome: Outcome = 'done';
        pool.start(
          job.client_id,
          async () => {
            outcome = await runner.run(job, how.stamp);
            if (!run.over) ended.push(outcome);
          },
          () => this.hooks.pooledEnded(outcome, settling && !run.over),
        );
      }
      if (claimed.length === 0 && claimedPooled.length === 0) {
        // On a shared store a claim may come back empty while jobs due by `next` are
        // there: another claim (another replica's wake-up) had them locked at that moment.
        // An advance must not end before they have run: look again shortly (a while at most).
        if (settling && shared && emptyClaims < EMPTY_CLAIM_TRIES) {
          await new Promise((resolve) => setTimeout(resolve, HELD_ELSEWHERE_POLL_MS[Math.min(emptyClaims++, HELD_ELSEWHERE_POLL_MS.length - 1)]));
          continue;
        }
        break;
      }
      emptyClaims = 0;
      const outcomes = await rows.runWork(work, how.stamp);
      if (settling && inFlight.busy(clientId)) await this.whileSaving(inFlight.idle(clientId));
      outcomes.push(...ended.splice(0));
      if (outcomes.includes('unavailable')) {
        // An advance must not answer as though what fell due had run: its caller is told (a 503) and advances again.
        if (settling) throw new Unavailable(ADVANCE_UNSAVED);
        this.hooks.retryLater();
        break;
      }
      if (outcomes.includes('interrupted')) return; // shutting down: what is left stays due
      // Let requests in once the jobs' slice is spent: a long advance must not hold the
      // event loop, nor due work wait a whole slice of requests per batch.
      await slices.taken();
    }
    if (settling && inFlight.busy(clientId)) await this.whileSaving(inFlight.idle(clientId));
  }

  /**
   * Waits for `jobs` (an advance's wait for its client's running jobs, or for room in the
   * pool that other clients' jobs hold), unless the store has been unable to take writes
   * for UNSAVED_AFTER_MS meanwhile: then the advance stops there with ADVANCE_UNSAVED, as
   * it does when a job could not save its work, and the jobs go on without it.
   */
  private async whileSaving(jobs: Promise<void>): Promise<void> {
    const { storage } = this.parts;
    let look: NodeJS.Timeout | undefined;
    const unsaved = new Promise<never>((_, reject) => {
      const check = () => {
        const health = storage.health();
        if (!health.writable && Date.now() - (health.since ?? Date.now()) >= UNSAVED_AFTER_MS) reject(new Unavailable(ADVANCE_UNSAVED));
        else look = setTimeout(check, HEALTH_LOOK_MS).unref();
      };
      look = setTimeout(check, HEALTH_LOOK_MS).unref();
    });
    try {
      await Promise.race([jobs, unsaved]);
    } finally {
      clearTimeout(look);
    }
  }

  /**
   * With a store that other processes share: waits a moment and answers true when a job of
   * the client due by `until` is held by another worker under a live lease.
   */
  private async heldElsewhere(clientId: string, until: number, waited: number): Promise<boolean> {
    if ((await this.parts.storage.jobs.heldElsewhere?.(clientId, until, this.parts.owner)) === undefined) return false;
    await new Promise((resolve) => setTimeout(resolve, HELD_ELSEWHERE_POLL_MS[Math.min(waited, HELD_ELSEWHERE_POLL_MS.length - 1)]));
    return true;
  }
}
