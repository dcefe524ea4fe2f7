import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServedRequest } from '../requests/index.js';
import type { Storage } from '../store/index.js';
import type { AttemptObserver } from '../webhooks/index.js';
import { applyReportChange, type ReportChange, type ReportState, type ReportView } from '../records/index.js';
import { appliedFault } from '../faults/index.js';
import { backgroundFailures } from '../shared/index.js';
import { Draft } from './draft.js';
import { judgeAttempt } from './judge-attempt.js';
import { BatchReads } from './batch-reads.js';
import { judgeRequest, marksOnAnswer, type Judged } from './judge-request.js';
import { observed, type Observed } from './observed.js';
import { operationCountKey } from './operations.js';

/** A judgment of one observation against the client's report as it stands before it. */
interface Judge {
  judge(state: ReportView, reads: BatchReads): Promise<Draft | undefined>;
}

/** Most observations of one client judged against one read of its report and stored in one change. */
const BATCH = 256;
/**
 * Most observations of one client held (waiting or being judged; each keeps at most
 * KEPT_BODY_BYTES of its request, see observed.ts): past it, while the store is that
 * far behind, the client's new ones are dropped and counted in one log line per batch,
 * so a flood from one partner cannot grow the process.
 */
export const PENDING_PER_CLIENT = 1_000;
/**
 * Whether a request shows the client's own behaviour: made with one of its partner
 * tokens, not by an admin acting for it (an operator browsing a partner's orders) nor
 * with its read-only token (an observer, the dashboard signed in with it). Told by the
 * token, which a client's code cannot pass off as another's.
 */
const byTheClient = (served: ServedRequest): boolean => served.input.role !== 'admin' && served.input.role !== 'read_only';

/** Someone waiting until the client's observations up to `upTo` have their marks stored, or are judged and stored whole. */
interface Waiter {
  upTo: number;
  of: 'marked' | 'judged';
  done: () => void;
}

/**
 * Longest an answer waits for its request's marks (see ReportObserver.answer): a store that
 * is slow or away delays answers by no more, and the next request may then be judged
 * before the marks exist.
 */
const ANSWER_WAIT_MS = 2_000;

/** Of each client, the creates and tracking reads last judged that judging keeps at hand (see Judging.recent). */
const RECENT = 16;

/**
 * Watches what the sandbox already sees of a client (its provider requests as they
 * close, and the webhook attempts made to it) and counts, per catalogue item, what was
 * exercised, handled or missed, in the client's report, and how often each operation
 * was answered with each status (the operations' coverage). Observations of one client
 * are applied one at a time, in the order they were made.
 */
export class ReportObserver {
  /** Observations waiting to be judged, per client, in the order they were made. */
  private readonly pending = new Map<string, Judge[]>();
  /** Observations dropped per client since the last batch said so (see PENDING_PER_CLIENT). */
  private readonly dropped = new Map<string, number>();
  /** Per client with observations held: how many were taken in all, how many judged, and who waits for which count. */
  private readonly progress = new Map<string, { taken: number; marked: number; judged: number; waiters: Waiter[] }>();
  /** Per client, the counts and events of its batches being stored, in order (see drain). */
  private readonly counting = new Map<string, Promise<void>>();
  /** Inputs of requests taken for judging, as they were answered (see answer) or once they closed: each is judged once. */
  private readonly judging = new WeakSet<object>();
  /** This process among the replicas (see Judging.replica). */
  private readonly replica = randomUUID().slice(0, 8);
  /** The run judging a client's observations, while there are any. */
  private readonly runs = new Map<string, Promise<void>>();
  /** `manualClock`: the sandbox runs a manual clock, which the client's tests move in place of waiting (see judgeRequest). */
  /** Per client, its creates and tracking reads last judged, oldest first (at most RECENT). */
  private readonly recent = new Map<string, Judged[]>();
  /** Logs a failed observation: warnings that count them while the store is unavailable, else an error (see backgroundFailures). */
  private readonly failed: ReturnType<typeof backgroundFailures>;
  constructor(private readonly deps: { storage: Storage; logger: Logger; manualClock: boolean }) {
    this.failed = backgroundFailures(deps.logger);
  }

  /**
   * For `observeAnswer`: a request whose judgment sets a mark its client's next request is
   * judged against (a 503, a refusal: see marksOnAnswer) is judged before it is answered,
   * and its answer waits until those marks are stored (at most ANSWER_WAIT_MS): the next
   * request, sent once this answer came, finds them on whichever replica serves it.
   */
  readonly answer = (served: ServedRequest): Promise<void> | undefined => {
    const client = served.input.client;
    if (!client || !byTheClient(served) || this.judging.has(served.input)) return undefined;
    // Asked of every request as it is answered: what is kept of it for judging is made only for those judged now.
    if (!marksOnAnswer({ served, fault: appliedFault(served.input) })) return undefined;
    const kept = observed(served);
    this.judging.add(served.input);
    const upTo = this.enqueue(client.id, this.requestJudge(client.id, kept, served));
    return upTo === undefined ? undefined : this.marksStored(client.id, upTo);
  };

  /** For `observeProvider`: every provider request of a client, once its connection closed (unless judged as it was answered). */
  readonly request = (served: ServedRequest): void => {
    const client = served.input.client;
    if (!client || !byTheClient(served) || this.judging.has(served.input)) return;
    // Answered after its close (the client gave up first), it is not judged again (see answer).
    if (served.aborted) this.judging.add(served.input);
    this.enqueue(client.id, this.requestJudge(client.id, observed(served), served));
  };

  /** The judgment of a request, as it ended or is about to be answered. */
  private requestJudge(clientId: string, kept: Observed, served: ServedRequest): Judge {
    const wall = Math.round(Date.now() - served.durationMs);
    const { operationId } = served.input.operation;
    const status = served.status;
    return {
      judge: async (state, reads) => {
        // A request that arrived before the run started is none of the run's, though it closed after: nor is a retry it may be of.
        const since = state.run?.started_wall ?? -Infinity;
        if (wall < since) return undefined;
        const held = this.recent.get(clientId) ?? [];
        const recent = held[0] !== undefined && held[0].wall < since ? held.filter((r) => r.wall >= since) : held;
        const draft = await judgeRequest({ reads, manualClock: this.deps.manualClock, recent, replica: this.replica }, clientId, kept, wall, state);
        if (operationId === 'createOrder' || operationId === 'trackOrder') {
          recent.push({ kept, wall });
          if (recent.length > RECENT) recent.shift();
          this.recent.set(clientId, recent);
        }
        // Every request counts toward the operations' coverage, whatever the catalogue made of it.
        if (status !== null) draft.count(operationCountKey(operationId, status));
        return draft;
      },
    };
  }

  /** For the webhook dispatcher. */
  readonly attempts: AttemptObserver = {
    made: (delivery, attempt) => {
      if (delivery.event !== 'awb.generated') return;
      this.enqueue(delivery.client_id, { judge: async (state) => judgeAttempt(delivery, attempt, attempt.at, state) });
    },
  };

  /**
   * Waits until every observation made so far is in the store (the report handler, tests);
   * not for those made after, so it answers while the client's traffic goes on.
   */
  settled(clientId: string): Promise<void> {
    const progress = this.progress.get(clientId);
    if (!progress || progress.judged >= progress.taken) return Promise.resolve();
    return new Promise((done) => progress.waiters.push({ upTo: progress.taken, of: 'judged', done }));
  }

  /** Waits until the marks of the client's observations up to `upTo` are stored (or lost), at most ANSWER_WAIT_MS. */
  private marksStored(clientId: string, upTo: number): Promise<void> {
    const progress = this.progress.get(clientId);
    if (!progress || progress.marked >= upTo) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(done, ANSWER_WAIT_MS).unref();
      progress.waiters.push({ upTo, of: 'marked', done: () => (clearTimeout(timer), done()) });
    });
  }

  /** Holds an observation for judging; answers how many of the client's were taken with it, or undefined when it was dropped. */
  private enqueue(clientId: string, judge: Judge): number | undefined {
    let progress = this.progress.get(clientId);
    if (progress && progress.taken - progress.judged >= PENDING_PER_CLIENT) {
      this.dropped.set(clientId, (this.dropped.get(clientId) ?? 0) + 1);
      return undefined;
    }
    if (!progress) this.progress.set(clientId, (progress = { taken: 0, marked: 0, judged: 0, waiters: [] }));
    progress.taken += 1;
    const waiting = this.pending.get(clientId);
    if (waiting) waiting.push(judge);
    else this.pending.set(clientId, [judge]);
    if (!this.runs.has(clientId)) this.runs.set(clientId, this.drain(clientId));
    return progress.taken;
  }

  /** Counts `n` more of the client's observations with their marks stored, or judged and stored whole, and lets go of whoever waited for them. */
  private advance(clientId: string, n: number, what: 'marked' | 'judged'): void {
    const progress = this.progress.get(clientId);
    if (!progress) return;
    if (what === 'marked') progress.marked += n;
    else progress.judged += n;
    const reached = (waiter: Waiter): boolean => waiter.upTo <= progress[waiter.of];
    for (const waiter of progress.waiters) if (reached(waiter)) waiter.done();
    progress.waiters = progress.waiters.filter((waiter) => !reached(waiter));
    if (progress.judged >= progress.taken && progress.waiters.length === 0) this.progress.delete(clientId);
  }

  /**
   * Judges the client's observations until none wait: those that came while the last
   * batch was judged form the next, up to BATCH at a time. A batch's marks are stored
   * before the next is judged (it is judged against them); its counts and events are
   * stored meanwhile, and counted judged in order once they are. (Single-threaded: no
   * observation slips in between finding none and the run's end.)
   */
  private async drain(clientId: string): Promise<void> {
    try {
      for (let judges = this.pending.get(clientId); judges; judges = this.pending.get(clientId)) {
        this.pending.delete(clientId);
        for (let i = 0; i < judges.length; i += BATCH) {
          const batch = judges.slice(i, i + BATCH);
          const counting: Array<Promise<void>> = [];
          // A batch whose marks the store refused is judged again one by one: a change that
          // cannot be stored loses one observation, not its batch. (When the report cannot
          // even be read, the store is away: the batch is lost, with one log line.)
          if ((await this.judgeBatch(clientId, batch, counting)) === 'change failed' && batch.length > 1) for (const judge of batch) await this.judgeBatch(clientId, [judge], counting);
          this.advance(clientId, batch.length, 'marked');
          // Counted judged once its counts and those of the batches before are stored (as few promises as may be: this runs per batch).
          const before = this.counting.get(clientId);
          const writes = counting.length === 0 ? undefined : counting.length === 1 ? counting[0]! : Promise.all(counting);
          if (before === undefined && writes === undefined) {
            this.advance(clientId, batch.length, 'judged');
            continue;
          }
          const after = (before === undefined ? writes! : writes === undefined ? before : Promise.all([before, writes])).then(() => {
            this.advance(clientId, batch.length, 'judged');
            if (this.counting.get(clientId) === after) this.counting.delete(clientId);
          });
          this.counting.set(clientId, after);
        }
      }
    } finally {
      this.runs.delete(clientId);
    }
  }

  /**
   * Stores a batch's counts and events; when the store refuses them, each observation's
   * on its own, so that a change that cannot be stored loses one observation, not its batch.
   */
  private count(clientId: string, change: ReportChange, changes: ReadonlyArray<Draft['change']>): Promise<void> {
    const lost = (err: unknown, n: number): void => this.failed('readiness report observation', err, `${n} observations of client ${clientId} were not recorded (the report misses them)`, { client: clientId, observations: n });
    return this.deps.storage.reports.change(clientId, change).catch(async (err: unknown) => {
      if (changes.length <= 1) return lost(err, changes.length);
      for (const { counts, events } of changes) await this.deps.storage.reports.change(clientId, { counts, events }).catch((one: unknown) => lost(one, 1));
    });
  }

  /**
   * One read of the report, the store reads its judgments need shared (BatchReads), then
   * each observation judged in turn against the report as the ones
   * before left it (their marks), then one change with all their marks, stored before
   * this answers, and one with their counts and events, pushed to `counting`: under load
   * a replica's store calls go by batch, not by request.
   * Answers how it went (a failure is logged).
   */
  private async judgeBatch(clientId: string, judges: Judge[], counting: Array<Promise<void>>): Promise<'stored' | 'read failed' | 'change failed'> {
    const { storage, logger } = this.deps;
    let read = false;
    const lost = (err: unknown): void => this.failed('readiness report observation', err, `${judges.length} observations of client ${clientId} were not recorded (the report misses them)`, { client: clientId, observations: judges.length });
    try {
      let view = await storage.reports.get(clientId, { events: false, counts: false });
      read = true;
      const reads = new BatchReads(storage);
      const batch = new Draft(0);
      const changes: Array<Draft['change']> = [];
      for (const judge of judges) {
        let draft: Draft | undefined;
        try {
          draft = await judge.judge(view, reads);
        } catch (err) {
          this.failed('readiness report observation', err, 'an observation was not recorded', { client: clientId });
        }
        if (!draft || draft.empty) continue;
        batch.add(draft.change);
        changes.push(draft.change);
        // The marks as the store will keep them after this one (its bound included), for the next.
        if (Object.keys(draft.change.marks).length > 0) view = applyReportChange({ ...view, events: [] } as unknown as ReportState, { marks: draft.change.marks }, 0); // copies, never changes, what it is given
      }
      const { marks, counts, events } = batch.change;
      if (Object.keys(marks).length > 0) await storage.reports.change(clientId, { marks });
      if (Object.keys(counts).length > 0 || events.length > 0) counting.push(this.count(clientId, { counts, events }, changes));
      const dropped = this.dropped.get(clientId);
      if (dropped !== undefined) {
        this.dropped.delete(clientId);
        logger.warn({ client: clientId, dropped, waiting_max: PENDING_PER_CLIENT }, 'readiness report observations dropped: the store is behind this client’s requests');
      }
      return 'stored';
    } catch (err) {
      lost(err);
      return read ? 'change failed' : 'read failed';
    }
  }
}
