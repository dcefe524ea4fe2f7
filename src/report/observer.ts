import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ServedRequest } from '../requests/index.js';
import type { Storage } from '../store/index.js';
import type { AttemptObserver } from '../webhooks/index.js';
import type { ReportChange, ReportView } from '../records/index.js';
import { appliedFault } from '../faults/index.js';
import { backgroundFailures } from '../shared/index.js';
import { AnswersOut } from './answers-out.js';
import { Draft } from './draft.js';
import { judgeAttempt, judgeGivenUp } from './judge-attempt.js';
import { BatchReads } from './batch-reads.js';
import { BatchView } from './batch-view.js';
import { judgeRequest, marksOnAnswer, refusedControl } from './judge-request.js';
import type { Judged } from './judging.js';
import { observed, type Observed, type Readable } from './observed.js';
import { operationCountKey } from './operations.js';
import { JudgingProgress } from './progress.js';

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
 * token, which a client's code cannot pass off as another's. Nor a request whose body the
 * sandbox refused to read (too many of its token's at once): what it sent is unknown.
 */
const byTheClient = (served: ServedRequest): boolean => served.input.role !== 'admin' && served.input.role !== 'read_only' && served.input.bodyUnread !== true;

/**
 * Longest an answer waits for its request's marks (see ReportObserver.answer): a store that
 * is slow or away delays answers by no more, and the next request may then be judged
 * before the marks exist.
 */
const ANSWER_WAIT_MS = 2_000;

/** Of each client, the creates and tracking reads last judged that judging keeps at hand (see Judging.recent). */
const RECENT = 16;

/** What a failed write of a client's observations lost, for the log. */
const notRecorded = (n: number, clientId: string): string =>
  n === 1 ? `1 observation of client ${clientId} was not recorded (the report misses it)` : `${n} observations of client ${clientId} were not recorded (the report misses them)`;

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
  /** Per client with observations held: how many were taken, stored and judged, and who waits for which. */
  private readonly progress = new JudgingProgress();
  /** Per client, the counts and events of its batches being stored, in order (see drain). */
  private readonly counting = new Map<string, Promise<void>>();
  /** Per client whose judging waits for its last batch's counts to be stored: what cuts that wait short (see drain). */
  private readonly wakes = new Map<string, () => void>();
  /** Inputs of requests taken for judging, as they were answered (see answer) or once they closed: each is judged once. */
  private readonly judging = new WeakSet<object>();
  /** This process among the replicas (see Judging.replica). */
  private readonly replica = randomUUID().slice(0, 8);
  /** When the answers that waited for their marks went out (see Judging.answeredAt). */
  private readonly answersOut = new AnswersOut();
  /** The run judging a client's observations, while there are any. */
  private readonly runs = new Map<string, Promise<void>>();
  /** Per client, its creates and tracking reads last judged, oldest first (at most RECENT). */
  private readonly recent = new Map<string, Judged[]>();
  /** Logs a failed observation: warnings that count them while the store is unavailable, else an error (see backgroundFailures). */
  private readonly failed: ReturnType<typeof backgroundFailures>;
  constructor(private readonly deps: { storage: Storage; logger: Logger; manualClock: boolean; readable?: Readable; secretsOf?: (clientId: string) => readonly string[] }) {
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
    const kept = observed(served, this.deps.readable, this.deps.secretsOf?.(client.id));
    this.judging.add(served.input);
    const upTo = this.enqueue(client.id, this.requestJudge(client.id, kept, served));
    if (upTo === undefined) return undefined;
    const stored = this.progress.marksStored(client.id, upTo, ANSWER_WAIT_MS);
    this.wakes.get(client.id)?.();
    // An answer that asks for the request again: when it goes out is when its Retry-After starts.
    if (served.status !== 503 && served.status !== 429) return stored;
    const origin = `${this.replica}:${served.seq}`;
    this.answersOut.hold(client.id, origin);
    return stored.finally(() => this.answersOut.release(client.id, origin, Date.now()));
  };

  /** For `observeProvider`: every provider request of a client, once its connection closed (unless judged as it was answered). */
  readonly request = (served: ServedRequest): void => {
    const client = served.input.client;
    if (!client || !byTheClient(served) || this.judging.has(served.input)) return;
    // Answered after its close (the client gave up first), it is not judged again (see answer).
    if (served.aborted) this.judging.add(served.input);
    this.enqueue(client.id, this.requestJudge(client.id, observed(served, this.deps.readable, this.deps.secretsOf?.(client.id)), served));
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
        const draft = await judgeRequest({ reads, manualClock: this.deps.manualClock, recent, replica: this.replica, answeredAt: (origin) => this.answersOut.of(clientId, origin) }, clientId, kept, wall, state);
        if (operationId === 'createOrder' || operationId === 'trackOrder') {
          recent.push({ kept, wall });
          if (recent.length > RECENT) recent.shift();
          this.recent.set(clientId, recent);
        }
        // Every request counts toward the operations' coverage, whatever the catalogue made of it, but
        // one refused for the sandbox's own controls alone: no answer of the provider's, only the test's setup.
        if (status !== null && !refusedControl(kept.served)) draft.count(operationCountKey(operationId, status));
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
    gaveUp: (delivery, attempt) => {
      if (delivery.event !== 'awb.generated') return;
      this.enqueue(delivery.client_id, { judge: async () => judgeGivenUp(delivery, attempt, attempt.at) });
    },
  };

  /**
   * Waits until every observation made so far is in the store (the report handler, tests);
   * not for those made after, so it answers while the client's traffic goes on.
   */
  settled(clientId: string): Promise<void> {
    return this.progress.settled(clientId);
  }

  /**
   * Resolves once every observation taken so far is judged and its counts stored: a stop
   * waits for it before the store closes, so that the webhook attempts its drain let end are
   * counted (a judgement that fails is logged as at any time).
   */
  async idle(): Promise<void> {
    while (this.runs.size > 0 || this.counting.size > 0) await Promise.allSettled([...this.runs.values(), ...this.counting.values()]);
  }

  /** Holds an observation for judging; answers how many of the client's were taken with it, or undefined when it was dropped. */
  private enqueue(clientId: string, judge: Judge): number | undefined {
    const taken = this.progress.take(clientId, PENDING_PER_CLIENT);
    if (taken === undefined) {
      this.dropped.set(clientId, (this.dropped.get(clientId) ?? 0) + 1);
      return undefined;
    }
    const waiting = this.pending.get(clientId);
    if (waiting) waiting.push(judge);
    else this.pending.set(clientId, [judge]);
    if (!this.runs.has(clientId)) this.runs.set(clientId, this.drain(clientId));
    return taken;
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
          this.progress.advance(clientId, batch.length, 'marked');
          // Counted judged once its counts and those of the batches before are stored (as few promises as may be: this runs per batch).
          const before = this.counting.get(clientId);
          const writes = counting.length === 0 ? undefined : counting.length === 1 ? counting[0]! : Promise.all(counting);
          if (before === undefined && writes === undefined) {
            this.progress.advance(clientId, batch.length, 'judged');
            continue;
          }
          const after = (before === undefined ? writes! : writes === undefined ? before : Promise.all([before, writes])).then(() => {
            this.progress.advance(clientId, batch.length, 'judged');
            if (this.counting.get(clientId) === after) this.counting.delete(clientId);
          });
          this.counting.set(clientId, after);
          // Paced by the store: the next batch is judged once these counts are stored (on PostgreSQL up
          // to a batch interval later), so that what comes meanwhile is judged together, with one read
          // of the report; an answer waiting for its marks cuts the wait short.
          if (!this.progress.answerWaits(clientId)) await this.storedOrWoken(clientId, after);
        }
      }
    } finally {
      this.runs.delete(clientId);
    }
  }

  /** Resolves once `stored` does, or sooner when an answer of the client starts to wait for its marks (see answer). */
  private async storedOrWoken(clientId: string, stored: Promise<void>): Promise<void> {
    const woken = new Promise<void>((resolve) => this.wakes.set(clientId, resolve));
    await Promise.race([stored, woken]);
    this.wakes.delete(clientId);
  }

  /**
   * Stores a batch's counts and events; when the store refuses them, each observation's
   * on its own, so that a change that cannot be stored loses one observation, not its batch.
   */
  private count(clientId: string, change: ReportChange, changes: ReadonlyArray<Draft['change']>): Promise<void> {
    const lost = (err: unknown, n: number): void => this.failed('readiness report observation', err, notRecorded(n, clientId), { client: clientId, observations: n });
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
    const lost = (err: unknown): void => this.failed('readiness report observation', err, notRecorded(judges.length, clientId), { client: clientId, observations: judges.length });
    try {
      const view = new BatchView(await storage.reports.get(clientId, { events: false, counts: false }));
      read = true;
      const reads = new BatchReads(storage);
      const batch = new Draft(0);
      const changes: Array<Draft['change']> = [];
      for (const judge of judges) {
        let draft: Draft | undefined;
        try {
          draft = await judge.judge(view.current, reads);
        } catch (err) {
          this.failed('readiness report observation', err, 'an observation was not recorded', { client: clientId });
        }
        if (!draft || draft.empty) continue;
        batch.add(draft.change);
        changes.push(draft.change);
        view.marked(draft.change.marks);
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
