import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { appliedFault } from '../faults/index.js';
import { declaredPlainLength, type ServedRequest } from '../requests/index.js';
import type { Storage } from '../store/index.js';
import type { AttemptObserver } from '../webhooks/index.js';
import type { Attempt, AwbGeneratedPayload, Delivery } from '../records/index.js';
import { applyReportChange, type ReportChange, type ReportMark, type ReportOutcome, type ReportState, type ReportView } from '../records/index.js';

/** Reads of an AWB closer together than this (sandbox time) after a 404 are polling it again at once. */
export const POLL_AGAIN_MS = 1000;
/** Slack on Retry-After for clocks and timers (real ms). */
const RETRY_AFTER_SLACK_MS = 100;

const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;
const isClientError = (status: number | null): boolean => status !== null && status >= 400 && status < 500;

/** A change being put together: counts per item and outcome, marks, and the events behind them. */
class Draft {
  readonly change: Required<Pick<ReportChange, 'counts' | 'marks' | 'events'>> = { counts: {}, marks: {}, events: [] };
  constructor(private readonly at: number) {}

  note(item: string, outcome: ReportOutcome, note: string): void {
    const key = `${item}:${outcome}`;
    this.change.counts[key] = (this.change.counts[key] ?? 0) + 1;
    this.change.events.push({ at: this.at, item, outcome, note });
  }

  /** Exercised, and handled or missed in the same breath. */
  judge(item: string, handled: boolean | undefined, note: string): void {
    this.note(item, 'exercised', note);
    if (handled !== undefined) this.note(item, handled ? 'handled' : 'missed', note);
  }

  mark(key: string, mark: ReportMark | null): void {
    this.change.marks[key] = mark;
  }

  /** Another draft's change after this one's: counts added, marks set or removed, events appended. */
  add(change: Draft['change']): void {
    for (const [key, n] of Object.entries(change.counts)) this.change.counts[key] = (this.change.counts[key] ?? 0) + n;
    for (const [key, mark] of Object.entries(change.marks)) {
      delete this.change.marks[key]; // set again last: the order marks were made in
      this.change.marks[key] = mark;
    }
    this.change.events.push(...change.events);
  }

  get empty(): boolean {
    return this.change.events.length === 0 && Object.keys(this.change.marks).length === 0;
  }
}

/** A judgment of one observation against the client's report as it stands before it. */
type Judge = (state: ReportView) => Promise<Draft | undefined>;

/** Most observations of one client judged against one read of its report and stored in one change. */
const BATCH = 256;
/**
 * Most observations of one client held (waiting or being judged; each keeps at most
 * KEPT_BODY_BYTES of its request): past it, while the store is that far behind, the
 * client's new ones are dropped and counted in one log line per batch, so a flood from
 * one partner cannot grow the process.
 */
export const PENDING_PER_CLIENT = 1_000;

/** Seconds or an HTTP date, as milliseconds from `wall`; null when absent or unreadable. */
function retryAfterMs(value: string | undefined, wall: number): number | null {
  if (value === undefined) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - wall);
}

const headerOf = (headers: Record<string, string> | undefined, name: string): string | undefined =>
  Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];

const fingerprint = (served: ServedRequest): string => createHash('sha256').update(`${served.input.path}\n${JSON.stringify(served.input.body ?? null)}`).digest('hex').slice(0, 16);

/** Bodies up to this size (Content-Length) stay with a waiting observation; a bigger one is reduced to what judging needs. */
const KEPT_BODY_BYTES = 16 * 1024;

/**
 * A request as its observation keeps it until judged: what judging reads of it (no
 * headers or query; a create's body only up to KEPT_BODY_BYTES, else its fingerprint).
 */
interface Observed {
  served: ServedRequest;
  fault: ReturnType<typeof appliedFault>;
  /** Items in a create's body. */
  items: number;
  fingerprint: () => string;
}

function observed(served: ServedRequest): Observed {
  const { input } = served;
  const fault = appliedFault(input);
  const items = (input.body as { items?: unknown } | undefined)?.items;
  const count = Array.isArray(items) ? items.length : 0;
  const op = input.operation.operationId;
  // Only creates and tracking reads are judged by their fingerprint (see the error marks).
  const small = op === 'createOrder' && (declaredPlainLength(input.headers) ?? Number.POSITIVE_INFINITY) <= KEPT_BODY_BYTES;
  const kept: ServedRequest = {
    ...served,
    query: {},
    input: { operation: input.operation, client: input.client, method: input.method, path: input.path, params: input.params, query: {}, headers: {}, body: small ? input.body : undefined, baseUrl: '' },
  };
  // A tracking read has no body: what is kept of it (its path) is all its fingerprint needs, hashed only if judging asks.
  if (small || op === 'trackOrder') return { served: kept, fault, items: count, fingerprint: () => fingerprint(kept) };
  const print = op === 'createOrder' ? fingerprint(served) : '';
  return { served: kept, fault, items: count, fingerprint: () => print };
}

/**
 * Watches what the sandbox already sees of a client (its provider requests as they
 * close, and the webhook attempts made to it) and counts, per catalogue item, what was
 * exercised, handled or missed, in the client's report. Observations of one client
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
  /** AWBs whose duplicate delivery is being answered, per client, and whether a tracking read came meanwhile. */
  private readonly duplicates = new Map<string, Map<string, { read: boolean }>>();

  constructor(private readonly deps: { storage: Storage; logger: Logger }) {}

  /** For `observeProvider`: every provider request of a client, once its connection closed. */
  readonly request = (served: ServedRequest): void => {
    const client = served.input.client;
    if (!client) return;
    const wall = Date.now() - served.durationMs;
    const kept = observed(served);
    this.enqueue(client.id, (state) => this.judgeRequest(client.id, kept, wall, state));
  };

  /** For the webhook dispatcher. */
  readonly attempts: AttemptObserver = {
    starting: (delivery, chaos) => {
      const awb = awbOf(delivery);
      if (chaos !== 'duplicate' || awb === undefined) return;
      const open = this.duplicates.get(delivery.client_id) ?? new Map<string, { read: boolean }>();
      open.set(awb, { read: false });
      this.duplicates.set(delivery.client_id, open);
    },
    made: (delivery, attempt) => {
      if (delivery.event !== 'awb.generated') return;
      const awb = awbOf(delivery);
      const duplicate = attempt.chaos === 'duplicate' && awb !== undefined ? this.duplicates.get(delivery.client_id)?.get(awb) : undefined;
      if (duplicate) this.duplicates.get(delivery.client_id)?.delete(awb!);
      this.enqueue(delivery.client_id, async () => judgeAttempt(delivery, attempt, duplicate, attempt.at));
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

  /** Forgets what is held in memory for the client (a reset or a new run). */
  forget(clientId: string): void {
    this.duplicates.delete(clientId);
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
   * One read of the report, then each observation judged in turn against it as the ones
   * before left it (their marks), then one change with all their counts, marks and
   * events: under load a replica does two store calls per batch, not per request.
   * Answers how it went (a failure is logged).
   */
  private async judgeBatch(clientId: string, judges: Judge[]): Promise<'stored' | 'read failed' | 'change failed'> {
    const { storage, logger } = this.deps;
    let read = false;
    try {
      let view = await storage.reports.get(clientId, { events: false });
      read = true;
      const batch = new Draft(0);
      for (const judge of judges) {
        let draft: Draft | undefined;
        try {
          draft = await judge(view);
        } catch (err) {
          logger.error({ err, client: clientId }, 'readiness report observation failed');
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
      logger.error({ err, client: clientId, observations: judges.length }, 'readiness report observation failed');
      return read ? 'change failed' : 'read failed';
    }
  }

  private async judgeRequest(clientId: string, kept: Observed, wall: number, state: ReportView): Promise<Draft> {
    const { served } = kept;
    const draft = new Draft(served.arrivedAt);
    const op = served.input.operation.operationId;
    const here = { at: served.arrivedAt, wall };
    // The path cut: each event keeps its note, and 1,100 of 15 KB paths made a report of 15 MB.
    const path = served.input.path.length <= 200 ? served.input.path : `${served.input.path.slice(0, 200)}…`;
    const what = `${served.method} ${path} → ${served.status ?? 'no answer'}`;

    // What the client did next, after an answer that asked something of it.
    const retry = state.marks[`retry:${op}`];
    if (retry) {
      draft.mark(`retry:${op}`, null);
      const kind = String(retry.detail.kind);
      draft.note(`fault.${kind}`, 'handled', `retried: ${what}`);
      const wait = retry.detail.retry_after_ms;
      if (typeof wait === 'number') {
        const waited = wall - retry.wall >= wait - RETRY_AFTER_SLACK_MS || served.arrivedAt - retry.at >= wait;
        draft.judge('fault.retry-after', waited, `retried after ${wall - retry.wall} ms (Retry-After ${wait} ms): ${what}`);
      }
    }
    const error = state.marks[`error:${op}`];
    if (error) {
      draft.mark(`error:${op}`, null);
      const same = error.detail.fingerprint === kept.fingerprint();
      draft.note(String(error.detail.item), same ? 'missed' : 'handled', same ? `sent again unchanged: ${what}` : `changed before sending again: ${what}`);
    }

    const { fault } = kept;
    const faultKind = fault?.type === 'status' && served.status === 503 ? '503-retried' : (fault?.type === 'hang' || fault?.type === 'latency') && served.aborted ? 'timeout' : fault?.type === 'reset' ? 'dropped' : undefined;
    if (faultKind) {
      draft.note(`fault.${faultKind}`, 'exercised', what);
      const wait = fault?.type === 'status' ? retryAfterMs(headerOf(fault.headers, 'retry-after'), wall) : null;
      draft.mark(`retry:${op}`, { ...here, detail: { kind: faultKind, retry_after_ms: wait } });
      return draft;
    }

    if (op === 'createOrder') this.judgeCreate(kept, draft, what, here);
    if (op === 'trackOrder') await this.judgeTracking(clientId, kept, draft, what, here, state);
    return draft;
  }

  private judgeCreate({ served, items, fingerprint: print }: Observed, draft: Draft, what: string, here: { at: number; wall: number }): void {
    if (served.status === 201) {
      draft.judge('op.create-order', true, what);
      if (items >= 2) draft.judge('create.multi-item', true, `${items} items: ${what}`);
    } else if (served.status === 400 || served.status === 403) {
      const item = `error.create-${served.status}`;
      draft.note(item, 'exercised', what);
      draft.mark('error:createOrder', { ...here, detail: { item, fingerprint: print() } });
    }
  }

  private async judgeTracking(clientId: string, { served, fingerprint: print }: Observed, draft: Draft, what: string, here: { at: number; wall: number }, state: ReportView): Promise<void> {
    const awb = served.input.params.order_no ?? '';
    const polled = state.marks[`404:${awb}`];
    if (polled) {
      draft.mark(`404:${awb}`, null);
      const soon = served.arrivedAt - polled.at < POLL_AGAIN_MS;
      draft.note('error.tracking-404', soon ? 'missed' : 'handled', soon ? `read again ${served.arrivedAt - polled.at} ms of sandbox time after its 404: ${what}` : `read again once time moved on: ${what}`);
    }
    if (served.status === 400) {
      draft.note('error.tracking-400', 'exercised', what);
      draft.mark('error:trackOrder', { ...here, detail: { item: 'error.tracking-400', fingerprint: print() } });
      return;
    }
    if (served.status === 404) {
      draft.note('error.tracking-404', 'exercised', what);
      draft.mark(`404:${awb}`, { ...here, detail: { awb } });
    }
    if (served.status !== 200 && served.status !== 404) return;
    const { orders, deliveries } = this.deps.storage;
    const order = await orders.byAwb(awb);
    if (served.status === 200) {
      draft.judge('op.tracking', true, what);
      const atEnd = order?.client_id === clientId && order.next_step === null && order.history.length > 0;
      draft.judge('journey.read-to-end', atEnd ? true : undefined, atEnd ? `the journey's last step: ${what}` : what);
    }
    if (order?.client_id !== clientId) return;
    const duplicate = this.duplicates.get(clientId)?.get(awb);
    if (duplicate) duplicate.read = true;
    const announced = (await deliveries.list(clientId, { limit: 20, order_no: order.order_no, event: 'awb.generated' })).items;
    if (announced.length === 0) return;
    const acknowledged = announced.some((d) => d.status === 'delivered') && !duplicate;
    draft.judge('tracking.after-webhook', acknowledged, acknowledged ? `after the AWB webhook was acknowledged: ${what}` : `before the AWB webhook was acknowledged: ${what}`);
  }
}

function awbOf(delivery: Delivery): string | undefined {
  if (delivery.event !== 'awb.generated') return undefined;
  try {
    return (JSON.parse(delivery.body) as AwbGeneratedPayload).awb;
  } catch {
    return undefined;
  }
}

/** What one webhook attempt shows of the client's receiver. */
function judgeAttempt(delivery: Delivery, attempt: Attempt, duplicate: { read: boolean } | undefined, at: number): Draft {
  const draft = new Draft(at);
  const what = `${delivery.id} attempt ${delivery.attempts.length + 1}${attempt.chaos ? ` (${attempt.chaos})` : ''} → ${attempt.status_code ?? attempt.error}`;
  const ok = isSuccess(attempt.status_code);
  if (attempt.chaos === 'bad_signature') {
    draft.judge('webhook.bad-signature', ok ? false : isClientError(attempt.status_code) ? true : undefined, what);
    return draft;
  }
  if (attempt.chaos === 'duplicate') {
    draft.judge('webhook.duplicate', ok && !duplicate?.read, duplicate?.read ? `tracking read while answering the duplicate: ${what}` : what);
    return draft;
  }
  draft.judge('webhook.awb-acknowledged', ok ? true : undefined, what);
  const failedBefore = delivery.attempts.some((a) => a.chaos !== 'duplicate' && !isSuccess(a.status_code));
  if (attempt.trigger === 'schedule' && failedBefore) draft.judge('webhook.retry-acknowledged', ok ? true : undefined, what);
  return draft;
}
