import { LATEST_CLOCK_MS } from './clock.js';
import { randomBytes } from 'node:crypto';
import { Unavailable } from '../shared/index.js';
import { OneAtATime } from '../shared/index.js';
import type { ClaimedJob, ClaimOptions, JobKind, Storage } from '../store/index.js';
import type { Clock, ManualClock, RealClock } from './clock.js';
import { Clocks } from './clocks.js';
import { holdingTurn, outsideTurn, Turn } from './turns.js';

/**
 * Runs one due job. `at` is the time it happened on its client's clock: use it, not the
 * clock, for timestamps. A handler that completes the job in its own transaction (with
 * `tx.jobs.complete(job)`, so the job ends with what it did) answers 'completed'; else the
 * scheduler completes it after.
 */
export type JobHandler = (job: ClaimedJob, at: number) => Promise<void | 'completed'>;

export interface SchedulerOptions {
  /** How many jobs due at the same moment run at once (AWB, steps, retention). */
  concurrency?: number;
  /** How many webhook attempts run at once in all, and for one client. */
  webhookConcurrency?: { total: number; perClient: number };
  /** How long a claim holds before another worker may take the job over (wall ms). */
  leaseMs?: number;
  /**
   * With a store shared by other processes (PostgreSQL replicas): look for due jobs at
   * least this often (wall ms), so a job whose claim lapsed when its replica died, or one
   * scheduled while a notification was missed, does not wait for the next local wake-up.
   */
  pollMs?: number;
  /**
   * With a store shared by other processes: brings the clocks up to what the store keeps
   * (another replica's advance or speed change) before each wake-up claims due jobs.
   */
  refreshClocks?: () => Promise<void>;
  onError?: (error: unknown, kind: string, key: string) => void;
  /** Told how late (real ms after its due time) each job fired by the real clock's timer ran (metrics). */
  onLate?: (kind: JobKind, lateMs: number) => void;
  /** The wall clock (ms) the jobs' turns on the event loop are measured with (see TURN_MS). Default `performance.now`; tests give their own. */
  wallClock?: () => number;
}

/** Thrown by a handler whose work was cut short (shutdown): the job stays due, for the next start. */
export class JobInterrupted extends Error {
  override name = 'JobInterrupted';
}

/** How often a job that throws unexpectedly is run in all before it is dropped, and the first wait between tries (doubling). */
const JOB_ATTEMPTS = 5;
const FAILED_JOB_RETRY_MS = 60_000;
/** How often an advance looks again for its client's jobs that another replica holds (wall ms, growing). */
const HELD_ELSEWHERE_POLL_MS = [10, 20, 50, 100, 200];
/** How many empty claims in a row an advance takes on a shared store, while a job is due, before it gives up (~5 s). */
const EMPTY_CLAIM_TRIES = 30;
/** How long to wait before trying again when the store cannot take writes. */
const UNAVAILABLE_RETRY_MS = 1_000;
/** Kinds that are quick and local (every kind but webhook): they run in order, and never wait behind a webhook attempt. */
const WORK: readonly JobKind[] = (['awb', 'step', 'retention'] satisfies Array<Exclude<JobKind, 'webhook'>>);
/**
 * Most work jobs of one client in a claim when they run one after another (see
 * `runWork`), so a partner with a thousand AWBs due at once makes each batch no longer
 * than this for the partners due just after it; side by side, four times as many.
 */
const WORK_PER_CLIENT = 8;
/**
 * How many of a client's jobs run at once when they run side by side: a store's
 * background connections are few (6 on PostgreSQL), and one partner's backlog must leave
 * some to the others.
 */
const ROW_PARALLEL = 3;
/**
 * How long the scheduler's drains run batches before they let the requests waiting in
 * (wall ms): as long as the event loop's other work took between the jobs' last two
 * turns, so under load due work and requests share the loop about half and half, and
 * from TURN_MS to MAX_TURN_MS. Every drain running at once (the timer's, clients'
 * advances) shares one turn and one wait, so drains do not add their turns up; a turn
 * ends with the batches running when it is spent (a batch is up to 32 jobs, a few
 * hundred microseconds on the embedded store).
 *
 * Yielding after every batch, under a create load, ran one batch per turn of the event
 * loop, whose requests took ~6 ms: AWB generation fell behind by ~15,000 orders a second
 * (256,578 AWBs behind after 17 s of 10-item creates, all generated 19.6 s after the
 * load). Fixed turns of 2 ms still fell behind (112,522 in 17 s); turns half as long as
 * the other work let AWBs fall 2.5-5 s behind in the 60 s create load of `npm run bench`,
 * as an AWB costs about as much as its order's create.
 */
const TURN_MS = 5;
export const MAX_TURN_MS = 15;
/** Kinds whose handler draws numbers in its turn (see `inTurn`): only they take one. */
const DRAWING: readonly JobKind[] = ['awb'];
/** How far past the earliest due job a real-clock wake-up claims at once (sandbox ms; see `drain`). */
const CLAIM_WINDOW_MS = 1_000;
/** Kinds that wait on a client's receiver: they run beside the work, within concurrency caps. */
const WEBHOOKS: readonly JobKind[] = ['webhook'];
/** Defaults of `webhookConcurrency`. */
export const WEBHOOK_CONCURRENCY = { total: 64, perClient: 8 };

type Outcome = 'done' | 'unavailable' | 'interrupted';
/** Which time a job is stamped with: its due time (advance, catch-up at start), or the later of that and its client's now (a job run late under load). */
type Stamp = 'due' | 'actual';

/** Which jobs a drain looks at: one client's on its own clock (an advance), or every client's on the sandbox's clock, each shifted by its lead. */
type Scope = Pick<ClaimOptions, 'clientId' | 'ahead'>;

interface Drain {
  /** The client whose clock moves (an advance); undefined: every client's due jobs (the timer, the catch-up at start). */
  clientId?: string;
  /** Due times up to here: on the client's clock, or on the sandbox's. */
  until: number;
  stamp: Stamp;
  /** Wait at each due time for the client's jobs running then (an advance). */
  settle: boolean;
  moveTo?: (at: number) => void;
}

/**
 * Webhook attempts in flight, per client and in all: a client's slow or silent receiver
 * uses its own share and holds up nobody else.
 */
class AttemptPool {
  private readonly perClient = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  private waiting: Array<() => void> = [];

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
    // An attempt's failures are its job's to handle; one that still escapes must not end the process.
    const running = work().catch(() => undefined).finally(() => {
      const left = this.perClient.get(clientId)! - 1;
      if (left === 0) this.perClient.delete(clientId);
      else this.perClient.set(clientId, left);
      this.inFlight.delete(running);
      for (const wake of this.waiting.splice(0)) wake();
      ended();
    });
    this.inFlight.add(running);
  }

  /** Resolves once an attempt in flight has ended (at once when none is). */
  slotFreed(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Resolves once no attempt is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }
}

/** Jobs running, per client (both lanes): an advance waits for its client's, whoever claimed them. */
class Running {
  private readonly byClient = new Map<string, Set<Promise<unknown>>>();

  track<T>(clientId: string, work: Promise<T>): Promise<T> {
    let set = this.byClient.get(clientId);
    if (!set) this.byClient.set(clientId, (set = new Set()));
    set.add(work);
    const done = (): void => {
      set.delete(work);
      if (set.size === 0 && this.byClient.get(clientId) === set) this.byClient.delete(clientId);
    };
    work.then(done, done);
    return work;
  }

  busy(clientId: string): boolean {
    return this.byClient.has(clientId);
  }

  /** Resolves once none of the client's jobs is running. */
  async idle(clientId: string): Promise<void> {
    for (let set = this.byClient.get(clientId); set; set = this.byClient.get(clientId)) await Promise.allSettled([...set]);
  }
}

/**
 * Runs the due jobs. Jobs are records in the store (`storage.jobs`) with a due time on
 * their client's clock; domain code schedules them inside its transactions. The
 * scheduler asks the jobs repository for the earliest due time, claims what is due,
 * runs each job's handler and completes it; so a restart resumes from the store, and
 * start-up work is in proportion to the pending jobs, not to the records.
 *
 * Each client has its own clock (`Clocks`): the timer and the catch-up at start claim
 * on the sandbox's clock with each client's lead (`ahead`), so every client's jobs fall
 * due at the right wall time; an advance moves one client's clock and claims only its jobs.
 *
 * Two lanes: AWB generation, tracking steps and retention run in due order, in
 * batches, taking turns on the event loop with the requests (see TURN_MS); webhook attempts, which wait on
 * receivers, run beside them in a pool capped in all and per client
 * (`webhookConcurrency`), so a silent receiver delays neither AWBs nor other clients.
 *
 * With a real clock a single unref'd timer waits for the earliest job, and a job run
 * late is stamped with its client's time when it ran; an advance (manual clock, or a
 * jump of a real one) stamps each job with its due time and waits at each due time for
 * the client's jobs running then, webhook attempts included.
 */
export class Scheduler {
  readonly clocks: Clocks;
  private readonly handlers = new Map<JobKind, JobHandler>();
  private readonly owner = `worker_${process.pid}_${randomBytes(4).toString('hex')}`;
  private readonly pool: AttemptPool;
  private readonly inFlight = new Running();
  /** The advances of each client: one at a time per client. */
  private readonly advances = new OneAtATime();
  /** Failures so far of jobs that threw unexpectedly, by kind and key (in memory: a restart gives each a fresh start). */
  private readonly failures = new Map<string, number>();
  /** Whether other processes share the store (and may hold this process's clients' jobs). */
  private readonly shared: boolean;
  private timer: NodeJS.Timeout | undefined;
  private armedAt = Infinity;
  /**
   * A wake-up's drain is waiting for its turn or running: it claims what falls due
   * meanwhile, and looks for the next due time when it ends, so a wake-up armed meanwhile
   * would only queue one more drain behind it (under an overload, one per webhook attempt
   * that ended, run one after another once the load stopped).
   */
  private waking = false;
  private readonly wallClock: () => number;
  /** The jobs' turn on the event loop that the drains share (see TURN_MS): when it began and how long it may run. */
  private turn: { began: number; budget: number };
  /** The one wait for the next turn, while the drains wait for it. */
  private nextTurn: Promise<void> | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly storage: Storage,
    clock: Clocks | RealClock | ManualClock,
    private readonly options: SchedulerOptions = {},
  ) {
    this.clocks = clock instanceof Clocks ? clock : new Clocks(clock);
    this.wallClock = options.wallClock ?? (() => performance.now());
    this.turn = { began: this.wallClock(), budget: TURN_MS };
    this.pool = new AttemptPool(options.webhookConcurrency ?? WEBHOOK_CONCURRENCY);
    this.shared = storage.jobs.heldElsewhere !== undefined;
    storage.onJobScheduled((dueAt, clientId) => {
      const at = dueAt - this.clocks.ahead(clientId);
      if (at >= this.armedAt) return;
      // While the client's webhook attempts have no room, its job may be one the wake-up
      // could not run: the look-up, which leaves those out, says when to wake.
      if (this.pool.room > 0 && this.pool.of(clientId) < this.pool.caps.perClient) this.armFor(at);
      else void this.arm();
    });
  }

  /** The sandbox's clock (sandbox-wide work). */
  get clock(): Clock {
    return this.clocks;
  }

  on(kind: JobKind, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  /**
   * Runs every job due now on its client's clock (and those they make due), each stamped
   * with its due time (the catch-up at start), then resolves; the webhook attempts it
   * started run on in the pool (`settle()` waits for them), so no client's work waits
   * behind a silent receiver.
   */
  runDue(): Promise<void> {
    return this.exclusive(async () => {
      await this.refreshClocks();
      await this.drain({ until: this.clocks.now(), stamp: 'due', settle: false });
    });
  }

  /** Resolves once no webhook attempt is in flight. */
  settle(): Promise<void> {
    return this.pool.idle();
  }

  /**
   * Moves one client's clock on by `ms` (a manual clock, or a jump of a real one),
   * running every job of that client that falls due on the way at its own time, in
   * order, and waiting at each due time for what runs then (webhook attempts included);
   * resolves when none of its jobs due by the target is unfinished. Other clients' clocks
   * and jobs are untouched. Advances of one client run one at a time; '' moves the
   * sandbox's own clock (sandbox-wide work).
   */
  advance(clientId: string, ms: number): Promise<void> {
    const work = async (): Promise<void> => {
      const lead = this.clocks.ahead(clientId);
      const target = this.clocks.of(clientId) + ms;
      await this.drain({ clientId, until: target, stamp: 'due', settle: true, moveTo: (at) => this.clocks.moveTo(clientId, at) });
      // A manual clock stands at the target; a real one has jumped by `ms` (and ran on meanwhile).
      if (this.clocks.mode === 'manual') this.clocks.moveTo(clientId, target);
      else this.clocks.keepAhead(clientId, lead + ms);
    };
    // Jobs of a real clock that jumped are due earlier in wall time now.
    return this.advances.run(clientId, work, () => void this.arm());
  }

  /** Moves every client's clock on by `ms`, and the sandbox's (an admin's advance of all): each as `advance` does. */
  async advanceAll(ms: number): Promise<void> {
    // Each client's target is its own time + ms, whenever its advance starts: not the sandbox's, moved meanwhile.
    for (const clientId of this.clocks.clients) this.clocks.pin(clientId);
    // A client whose own advances took it near the latest time a clock may show stops there (the sandbox's own clock is checked by the caller).
    const by = (clientId: string): number => (clientId === '' ? ms : Math.max(0, Math.min(ms, LATEST_CLOCK_MS - this.clocks.of(clientId))));
    await Promise.all([...this.clocks.clients, ''].map((clientId) => this.advance(clientId, by(clientId))));
  }

  /** Stops the timer and waits for running jobs; nothing runs afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.advances.idle();
    await this.pool.idle();
  }

  private exclusive(work: () => Promise<void>): Promise<void> {
    const next = this.running.then(work, work);
    this.running = next.catch(() => undefined);
    return next;
  }

  /** Claims on one client's clock, or on the sandbox's with every client's lead. */
  private scope(clientId: string | undefined): Scope {
    return clientId === undefined ? { ahead: this.clocks.leads() } : { clientId };
  }

  /**
   * Runs the jobs due by `until`, earliest due time first: at each due time, the work
   * lane's jobs together, and as many webhook attempts as the pool has room for.
   * With `settle` (one client's advance), waits for that client's jobs before the next
   * due time, and for room in the pool when its attempts due by `until` have none.
   */
  private drain(how: Drain): Promise<void> {
    // Outside any job's turn: a wake-up armed from inside a job (its commit announced a new one) must not inherit it.
    return outsideTurn(() => (this.storage.background ? this.storage.background(() => this.drainNow(how)) : this.drainNow(how)));
  }

  private async drainNow(how: Drain): Promise<void> {
    const limit = this.options.concurrency ?? 32;
    const leaseMs = this.options.leaseMs ?? 60_000;
    const { clientId } = how;
    const settling = how.settle && clientId !== undefined;
    /** Outcomes of the attempts this drain started. */
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
    const perClient = batched && this.storage.claimsPerClient === true;
    const window = perClient ? Infinity : CLAIM_WINDOW_MS;
    let until = how.until;
    let clocksRead = this.wallClock();
    while (!this.stopped) {
      // There, what falls due while a backlog drains is claimed beside it, not after it;
      // on a shared store with the clocks as the other replicas left them (read once a second).
      if (perClient) {
        if (this.shared && this.wallClock() - clocksRead >= 1_000) {
          await this.refreshClocks();
          clocksRead = this.wallClock();
        }
        until = Math.max(until, this.clocks.now());
      }
      const scope = this.scope(clientId);
      const earliest = await this.nextClaimable(scope);
      const next = batched && earliest !== undefined && earliest <= until ? Math.min(until, earliest + window) : earliest;
      if (next === undefined || next > until) {
        if (settling) {
          // The client's jobs still running (whoever claimed them), then its attempts that wait for room.
          if (this.inFlight.busy(clientId)) {
            await this.inFlight.idle(clientId);
            if (ended.splice(0).some((outcome) => outcome !== 'done')) break;
            continue;
          }
          const due = await this.storage.jobs.nextDue({ clientId });
          if (due !== undefined && due <= until && this.pool.busy) {
            await this.pool.slotFreed();
            continue;
          }
          // Its jobs due by the target that another replica runs (whose claim lapses if that replica died).
          if (this.shared && (await this.heldElsewhere(clientId, until, waited++))) continue;
        }
        break;
      }
      // Before the clock moves on to `next`: the client's jobs due earlier that another replica runs.
      if (settling && this.shared && (await this.heldElsewhere(clientId, next - 1, waited++))) continue;
      waited = 0;
      how.moveTo?.(next);
      const sideBySide = this.sideBySideFor(how.stamp);
      const work = await this.storage.jobs.claim({ until: next, limit: sideBySide ? limit * 2 : limit, owner: this.owner, leaseMs, kinds: WORK, perClient: sideBySide ? WORK_PER_CLIENT * 4 : WORK_PER_CLIENT, ...scope });
      const attempts =
        this.pool.room > 0
          ? await this.storage.jobs.claim({ until: next, limit: this.pool.room, owner: this.owner, leaseMs, kinds: WEBHOOKS, perClient: this.pool.caps.perClient, skipClients: this.pool.full(), ...scope })
          : [];
      for (const job of attempts) {
        // A claim takes up to perClient of a client's jobs, on top of those in flight: the extra wait, due.
        if (this.pool.of(job.client_id) >= this.pool.caps.perClient) {
          await this.storage.jobs.release(job).catch(() => undefined);
          continue;
        }
        let outcome: Outcome = 'done';
        this.pool.start(
          job.client_id,
          async () => {
            outcome = await this.run(job, how.stamp);
            ended.push(outcome);
          },
          () => this.afterAttempt(outcome, settling),
        );
      }
      if (work.length === 0 && attempts.length === 0) {
        // On a shared store a claim may come back empty while jobs due by `next` are
        // there: another claim (another replica's wake-up) had them locked at that moment.
        // An advance must not end before they have run: look again shortly (a while at most).
        if (settling && this.shared && emptyClaims < EMPTY_CLAIM_TRIES) {
          await new Promise((resolve) => setTimeout(resolve, HELD_ELSEWHERE_POLL_MS[Math.min(emptyClaims++, HELD_ELSEWHERE_POLL_MS.length - 1)]));
          continue;
        }
        break;
      }
      emptyClaims = 0;
      const outcomes = await this.runWork(work, how.stamp);
      if (settling) await this.inFlight.idle(clientId);
      outcomes.push(...ended.splice(0));
      if (outcomes.includes('unavailable')) {
        this.retryLater();
        break;
      }
      if (outcomes.includes('interrupted')) return; // shutting down: what is left stays due
      // Let requests in once the jobs' turn is spent: a long advance must not hold the
      // event loop, nor due work wait a whole turn of requests per batch.
      await this.turnTaken();
    }
    if (settling) await this.inFlight.idle(clientId);
  }

  /**
   * Runs claimed work, the clients side by side. Stamped with their due time (an advance,
   * the catch-up at start), a client's jobs run one after another in the order claimed
   * (earliest due, then first scheduled), so events come in the same order on every store.
   * Stamped with the time they run (the real clock's wake-ups) on a store that other
   * processes share (PostgreSQL), they run side by side: one after another, at a few round
   * trips each, the AWBs of a partner's load test fell behind by minutes. (The embedded
   * store runs units one at a time, and a job's unit takes microseconds.) Jobs of one
   * order still run in order, and AWB numbers are still drawn in the order claimed
   * (`inTurn`), so a seeded sandbox gives each order the same AWB.
   */
  private async runWork(work: readonly ClaimedJob[], stamp: Stamp): Promise<Outcome[]> {
    const byClient = new Map<string, ClaimedJob[]>();
    for (const job of work) byClient.set(job.client_id, [...(byClient.get(job.client_id) ?? []), job]);
    const rows = [...byClient.values()].map((jobs) => (this.sideBySideFor(stamp) ? this.sideBySide(jobs, stamp) : this.inRow(jobs, stamp)));
    return (await Promise.all(rows)).flat();
  }

  /**
   * Waits for the jobs' next turn on the event loop once this one is spent (see TURN_MS);
   * every drain waits on the same one. The next turn may run as long as the loop's other
   * work took meanwhile, within bounds.
   */
  private async turnTaken(): Promise<void> {
    if (this.wallClock() - this.turn.began < this.turn.budget) return;
    this.nextTurn ??= new Promise<void>((resolve) => {
      const asked = this.wallClock();
      setImmediate(() => {
        const began = this.wallClock();
        this.turn = { began, budget: Math.min(MAX_TURN_MS, Math.max(TURN_MS, began - asked)) };
        this.nextTurn = undefined;
        resolve();
      });
    });
    await this.nextTurn;
  }

  /** Whether a client's jobs stamped so run side by side (see `runWork`). */
  private sideBySideFor(stamp: Stamp): boolean {
    return stamp === 'actual' && this.shared;
  }

  /** A client's jobs one after another; after one cut short (shutdown, store away) the rest are given back untried. */
  private async inRow(jobs: readonly ClaimedJob[], stamp: Stamp): Promise<Outcome[]> {
    const ended: Outcome[] = [];
    for (const job of jobs) {
      const last = ended.at(-1);
      if (last === 'interrupted' || last === 'unavailable') {
        await this.storage.jobs.release(job).catch(() => undefined);
        continue;
      }
      ended.push(await this.run(job, stamp));
    }
    return ended;
  }

  /**
   * A client's jobs side by side, at most ROW_PARALLEL at once, started in the order
   * claimed: each after the one before it of the same order, and each AWB job taking
   * its turn after the AWB job claimed before it. After one cut short (shutdown, store
   * away) the jobs not started yet are given back untried.
   */
  private async sideBySide(jobs: readonly ClaimedJob[], stamp: Stamp): Promise<Outcome[]> {
    let previousTurn = Promise.resolve();
    const lastOfOrder = new Map<string, Promise<Outcome>>();
    const running = new Set<Promise<Outcome>>();
    const outcomes: Array<Promise<Outcome>> = [];
    let stopped = false;
    for (const job of jobs) {
      while (running.size >= ROW_PARALLEL) await Promise.race(running);
      if (stopped) {
        await this.storage.jobs.release(job).catch(() => undefined);
        continue;
      }
      const turn = DRAWING.includes(job.kind) ? new Turn(previousTurn) : undefined;
      if (turn) previousTurn = turn.done;
      const run = (): Promise<Outcome> => (turn ? holdingTurn(turn, () => this.run(job, stamp)) : this.run(job, stamp));
      const outcome = (lastOfOrder.get(job.key) ?? Promise.resolve()).then(run).then((ended) => {
        if (ended === 'interrupted' || ended === 'unavailable') stopped = true;
        return ended;
      });
      lastOfOrder.set(job.key, outcome);
      outcomes.push(outcome);
      running.add(outcome);
      void outcome.finally(() => running.delete(outcome));
    }
    return Promise.all(outcomes);
  }

  /**
   * With a store that other processes share: waits a moment and answers true when a job of
   * the client due by `until` is held by another worker under a live lease.
   */
  private async heldElsewhere(clientId: string, until: number, waited: number): Promise<boolean> {
    if ((await this.storage.jobs.heldElsewhere?.(clientId, until, this.owner)) === undefined) return false;
    await new Promise((resolve) => setTimeout(resolve, HELD_ELSEWHERE_POLL_MS[Math.min(waited, HELD_ELSEWHERE_POLL_MS.length - 1)]));
    return true;
  }

  /** Brings the clocks up to what a shared store keeps; a store that cannot answer leaves them as they are (its claims fail too). */
  private async refreshClocks(): Promise<void> {
    if (this.options.refreshClocks) await this.options.refreshClocks().catch(() => undefined);
  }

  /** The earliest due time of a job that can be claimed now: work, or attempts of clients with room in the pool. */
  private nextClaimable(scope: Scope): Promise<number | undefined> {
    return this.pool.room > 0 ? this.storage.jobs.nextDue({ ...scope, skipClients: this.pool.full() }) : this.storage.jobs.nextDue({ ...scope, kinds: WORK });
  }

  private run(job: ClaimedJob, stamp: Stamp): Promise<Outcome> {
    return this.inFlight.track(job.client_id, this.runJob(job, stamp));
  }

  private async runJob(job: ClaimedJob, stamp: Stamp): Promise<Outcome> {
    try {
      const at = stamp === 'due' ? job.due_at : Math.max(job.due_at, this.clocks.of(job.client_id));
      if (stamp === 'actual') this.options.onLate?.(job.kind, (at - job.due_at) / this.clocks.speed);
      if ((await this.handlers.get(job.kind)?.(job, at)) !== 'completed') await this.storage.jobs.complete(job);
      if (this.failures.size > 0) this.failures.delete(`${job.kind}:${job.key}`);
      return 'done';
    } catch (error) {
      // Giving the job back may fail too (the database went away): its lease then ends by itself.
      if (error instanceof JobInterrupted) {
        await this.storage.jobs.release(job).catch(() => undefined);
        return 'interrupted';
      }
      if (error instanceof Unavailable) {
        await this.storage.jobs.release(job).catch(() => undefined);
        return 'unavailable';
      }
      this.options.onError?.(error, job.kind, job.key);
      // A job that fails unexpectedly is tried again later (1, 2, 4, 8 minutes of its
      // client's clock), so a passing fault does not leave an AWB ungenerated or a webhook
      // pending for good; after the fifth failure it is dropped. If even that cannot be
      // saved, it is given back so it is not lost until a restart.
      const id = `${job.kind}:${job.key}`;
      const failures = (this.failures.get(id) ?? 0) + 1;
      if (failures < JOB_ATTEMPTS) {
        this.failures.set(id, failures);
        const retryAt = job.due_at + FAILED_JOB_RETRY_MS * 2 ** (failures - 1);
        await this.storage.jobs.schedule({ kind: job.kind, key: job.key, client_id: job.client_id, due_at: retryAt }).catch(() => this.storage.jobs.release(job).catch(() => undefined));
        return 'done';
      }
      this.failures.delete(id);
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
    if (this.stopped || this.clocks.mode !== 'real') return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = -Infinity;
    this.timer = setTimeout(() => this.fire(), UNAVAILABLE_RETRY_MS).unref();
  }

  /** Arms the timer afresh (the clock's speed changed: the wait for the same due time is another). */
  rearm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
    void this.arm();
  }

  /** Waits for the earliest due job of any client, in the sandbox clock's terms (real clock only). */
  async arm(): Promise<void> {
    if (this.stopped || this.clocks.mode !== 'real' || this.waking) return;
    // Webhook attempts of clients with no room are let in as attempts end (afterAttempt), not by the timer.
    let found: number | undefined;
    try {
      found = await this.nextClaimable(this.scope(undefined));
    } catch (error) {
      // The store is away (or failed): look again shortly; a timer's promise must not reject unheard.
      if (!(error instanceof Unavailable)) this.options.onError?.(error, 'scheduler', 'arm');
      this.retryLater();
      return;
    }
    const { pollMs } = this.options;
    if (found === undefined && pollMs === undefined) return;
    const at = found ?? Infinity;
    if (this.timer && this.armedAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = at;
    const delay = Math.min(at === Infinity ? Infinity : this.clocks.realDelayUntil(at), pollMs ?? Infinity, 2 ** 31 - 1);
    this.timer = setTimeout(() => this.fire(), delay).unref();
  }

  /**
   * Arms the timer for a job just scheduled (here, or told by another replica) that falls
   * due at `at`, earlier than the timer waits for: the due time is known, so no look-up of
   * the store. Under load that was a query per create (a drain unarms the timer, and every
   * job scheduled meanwhile looked again); now the jobs falling due meanwhile wait for one
   * wake-up and its drain, and the look-up after the drain (see `fire`) finds what else is due.
   */
  private armFor(at: number): void {
    if (this.stopped || this.clocks.mode !== 'real' || this.waking) return;
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = at;
    const delay = Math.min(this.clocks.realDelayUntil(at), 2 ** 31 - 1);
    this.timer = setTimeout(() => this.fire(), delay).unref();
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Infinity;
    if (this.waking) return; // the drain waiting or running looks again when it ends
    this.waking = true;
    this.exclusive(async () => {
      await this.refreshClocks();
      await this.drain({ until: this.clocks.now(), stamp: 'actual', settle: false });
    })
      .catch((error: unknown) => this.options.onError?.(error, 'scheduler', 'runDue'))
      .finally(() => {
        this.waking = false;
        void this.arm();
      });
  }
}
