import type { Logger } from 'pino';
import type { ServedRequest } from '../requests/index.js';
import type { Storage } from '../store/index.js';
import type { AttemptObserver } from '../webhooks/index.js';
import { applyReportChange, type ReportState, type ReportView } from '../records/index.js';
import { backgroundFailures } from '../shared/index.js';
import { Draft } from './draft.js';
import { judgeAttempt } from './judge-attempt.js';
import { BatchReads } from './batch-reads.js';
import { judgeRequest, type Judged } from './judge-request.js';
import { observed } from './observed.js';
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
  private readonly progress = new Map<string, { taken: number; judged: number; waiters: Array<{ upTo: number; done: () => void }> }>();
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

  /** For `observeProvider`: every provider request of a client, once its connection closed. */
  readonly request = (served: ServedRequest): void => {
    const client = served.input.client;
    if (!client || !byTheClient(served)) return;
    const wall = Math.round(Date.now() - served.durationMs);
    const kept = observed(served);
    const { operationId } = served.input.operation;
    const status = served.status;
    this.enqueue(client.id, {
      judge: async (state, reads) => {
        // A request that arrived before the run started is none of the run's, though it closed after: nor is a retry it may be of.
        const since = state.run?.started_wall ?? -Infinity;
        if (wall < since) return undefined;
        const held = this.recent.get(client.id) ?? [];
        const recent = held[0] !== undefined && held[0].wall < since ? held.filter((r) => r.wall >= since) : held;
        const draft = await judgeRequest({ reads, manualClock: this.deps.manualClock, recent }, client.id, kept, wall, state);
        if (operationId === 'createOrder' || operationId === 'trackOrder') {
          recent.push({ kept, wall });
          if (recent.length > RECENT) recent.shift();
          this.recent.set(client.id, recent);
        }
        // Every request counts toward the operations' coverage, whatever the catalogue made of it.
        if (status !== null) draft.count(operationCountKey(operationId, status));
        return draft;
      },
    });
  };

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
    return new Promise((done) => progress.waiters.push({ upTo: progress.taken, done }));
  }

  private enqueue(clientId: string, judge: Judge): void {
    let progress = this.progress.get(clientId);
    if (progress && progress.taken - progress.judged >= PENDING_PER_CLIENT) {
      this.dropped.set(clientId, (this.dropped.get(clientId) ?? 0) + 1);
      return;
    }
    if (!progress) this.progress.set(clientId, (progress = { taken: 0, judged: 0, waiters: [] }));
    progress.taken += 1;
    const waiting = this.pending.get(clientId);
    if (waiting) waiting.push(judge);
    else this.pending.set(clientId, [judge]);
    if (!this.runs.has(clientId)) this.runs.set(clientId, this.drain(clientId));
  }

  /** Counts `n` more of the client's observations judged, and lets go of whoever waited for them. */
  private judged(clientId: string, n: number): void {
    const progress = this.progress.get(clientId);
    if (!progress) return;
    progress.judged += n;
    const still = progress.waiters.filter((waiter) => waiter.upTo > progress.judged);
    for (const waiter of progress.waiters) if (waiter.upTo <= progress.judged) waiter.done();
    progress.waiters = still;
    if (progress.judged >= progress.taken && still.length === 0) this.progress.delete(clientId);
  }

  /**
   * Judges the client's observations until none wait: those that came while the last
   * batch was stored form the next, up to BATCH at a time. (Single-threaded: no
   * observation slips in between finding none and the run's end.)
   */
  private async drain(clientId: string): Promise<void> {
    try {
      for (let judges = this.pending.get(clientId); judges; judges = this.pending.get(clientId)) {
        this.pending.delete(clientId);
        for (let i = 0; i < judges.length; i += BATCH) {
          const batch = judges.slice(i, i + BATCH);
          // A batch whose change the store refused is judged again one by one: a change that
          // cannot be stored loses one observation, not its batch. (When the report cannot
          // even be read, the store is away: the batch is lost, with one log line.)
          if ((await this.judgeBatch(clientId, batch)) === 'change failed' && batch.length > 1) for (const judge of batch) await this.judgeBatch(clientId, [judge]);
          this.judged(clientId, batch.length);
        }
      }
    } finally {
      this.runs.delete(clientId);
    }
  }

  /**
   * One read of the report, the store reads its judgments need shared (BatchReads), then
   * each observation judged in turn against the report as the ones
   * before left it (their marks), then one change with all their counts, marks and
   * events: under load a replica's store calls go by batch, not by request.
   * Answers how it went (a failure is logged).
   */
  private async judgeBatch(clientId: string, judges: Judge[]): Promise<'stored' | 'read failed' | 'change failed'> {
    const { storage, logger } = this.deps;
    let read = false;
    try {
      let view = await storage.reports.get(clientId, { events: false, counts: false });
      read = true;
      const reads = new BatchReads(storage);
      const batch = new Draft(0);
      for (const judge of judges) {
        let draft: Draft | undefined;
        try {
          draft = await judge.judge(view, reads);
        } catch (err) {
          this.failed('readiness report observation', err, 'an observation was not recorded', { client: clientId });
        }
        if (!draft || draft.empty) continue;
        batch.add(draft.change);
        // The marks as the store will keep them after this one (its bound included), for the next.
        if (Object.keys(draft.change.marks).length > 0) view = applyReportChange({ ...view, events: [] } as unknown as ReportState, { marks: draft.change.marks }, 0); // copies, never changes, what it is given
      }
      if (!batch.empty) await storage.reports.change(clientId, batch.change);
      const dropped = this.dropped.get(clientId);
      if (dropped !== undefined) {
        this.dropped.delete(clientId);
        logger.warn({ client: clientId, dropped, waiting_max: PENDING_PER_CLIENT }, 'readiness report observations dropped: the store is behind this client’s requests');
      }
      return 'stored';
    } catch (err) {
      this.failed('readiness report observation', err, `${judges.length} observations of client ${clientId} were not recorded (the report misses them)`, { client: clientId, observations: judges.length });
      return read ? 'change failed' : 'read failed';
    }
  }
}
