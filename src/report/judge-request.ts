import { CONTENT_SEEN, SAME_SEEN, type FaultAction, type ReportMark, type ReportView } from '../records/index.js';
import { headerOf, retryAfterMs } from '../shared/index.js';
import { Draft } from './draft.js';
import { acknowledged, judgeCreate, judgeTracking, refusedKey } from './judge-operation.js';
import { RETRY_AFTER_SLACK_MS, describe, markBefore, shownCode, type Judged, type Judging } from './judging.js';
import type { Observed } from './observed.js';

/** A fault the client met, and when (sandbox and real time). */
interface MetFault {
  kind: string;
  retryAfterMs: unknown;
  at: number;
  wall: number;
  /** 1 when the operation ran although the client gave up (a create then exists: sending it again makes a duplicate). */
  ran?: unknown;
  /** 1 when the 503 was a real outage (a store that cannot write): its Retry-After is waited in real time only. */
  realTime?: unknown;
  /** The request's origin (replica and arrival number): on its replica, when its answer went out is known. */
  origin?: string;
  /** 1 when Retry-After was a date: its wait is counted from the request's arrival, where the date was read. */
  dated?: unknown;
}

/** The mark of a request that met a fault and waits for its retry: one per request (path and body), so each is judged on its own. */
export const retryKey = (op: string, print: string): string => `retry:${op}:${print}`;
/** The mark of the latest Retry-After an operation answered: until it ends, the operation's requests are hammering. */
const windowKey = (op: string): string => `window:${op}`;
/** A create's content (its body without order codes, see Observed.content) after a create carried out although the client gave up on it. */
const contentKey = (content: string): string => `content:createOrder:${content}`;
/**
 * What a request is compared by, for a retry and a Retry-After's window. Once a create waited
 * for its retry (SAME_SEEN), each create is compared as the provider reads it (Observed.same:
 * keys in any order, fields the provider ignores), so that a retry built anew from the same
 * order is taken for one; before, its body as sent is hashed, which costs less. Only once such
 * a create was carried out (CONTENT_SEEN) does judging hash each create's content.
 */
const printOf = (kept: Observed, state: ReportView): string =>
  kept.served.input.operation.operationId === 'createOrder' && state.marks[SAME_SEEN] ? kept.same() : kept.fingerprint();
/**
 * Whether the operation still ran under each fault action (see the fault rules' table): a
 * create the client gave up on was then made (a reset's only when it cuts after some ms,
 * see cutLater). Every action is named, so a new one is a type error here until the report
 * knows how to judge it.
 */
const RUNS_ANYWAY: Record<FaultAction['type'], boolean> = { status: false, latency: true, reset: false, hang: false, dribble: true };
/** A reset rule's cut after some ms, once part of the answer went out (not a connection dropped at once). */
const cutLater = (fault: Observed['fault']): boolean => fault?.type === 'reset' && typeof (fault as { after_ms?: unknown }).after_ms === 'number';
const ranAnyway = (fault: Observed['fault']): boolean => fault !== undefined && (RUNS_ANYWAY[fault.type] || cutLater(fault));

/**
 * Whether the answer asks for the request again later, as a test of the client's handling:
 * any 503 (a fault rule's, a Prefer's, a store that cannot write) and a fault rule's 429.
 * The sandbox's own 429s are not (`--rate-limit`, too many requests waiting or held): they
 * protect a shared deployment and stay cheap under a flood, and a client's requests already
 * on their way when the first is refused would be judged as ignoring it.
 */
const asksAgain = ({ served, fault }: Pick<Observed, 'served' | 'fault'>): boolean =>
  (served.status === 503 && (fault === undefined || fault.type === 'status')) || (served.status === 429 && fault?.type === 'status');

/**
 * Whether judging a request sets a mark the client's next request is judged against, from what
 * is known as it is answered (a 503, a connection dropped at once, a refused create or tracking
 * read, a tracking 404, after a `latency` rule's wait too, a request held): it is then judged
 * before its answer goes out (see ReportObserver.answer). A slow answer's timeout, and any
 * dribbled answer, are known only once the connection closes.
 */
export function marksOnAnswer({ served, fault }: Pick<Observed, 'served' | 'fault'>): boolean {
  // A hang rule's request refused before it was held (a 429: too many held) is answered, and asks nothing.
  if (fault?.type === 'hang') return served.status === null;
  // A connection cut after some ms is judged as it closes (what went out first is known then).
  if (fault?.type === 'reset') return !cutLater(fault);
  // A dribbled answer may yet be given up on: what it was (a timeout, or the status) is known as it closes.
  if (fault?.type === 'dribble') return false;
  // A slow answer's wait is over once it is written (a client that gave up first is judged at its close, see beforeAnswer).
  if (served.status === 503 || served.status === 429) return asksAgain({ served, fault });
  if (fault?.type === 'status') return false;
  const op = served.input.operation.operationId;
  if (op === 'createOrder') return served.status === 400 || served.status === 403;
  return op === 'trackOrder' && (served.status === 400 || (served.status === 404 && served.input.magicAwb !== true));
}

/** Notes the retry of a request that met a fault, and whether it waited what Retry-After said. */
function noteRetry(judging: Judging, draft: Draft, fault: MetFault, retry: Judged): void {
  const { served } = retry.kept;
  const what = describe(retry.kept);
  // A create the sandbox carried out although the client gave up on it: sent again, it is a second shipment.
  if (fault.ran === 1 && served.input.operation.operationId === 'createOrder' && served.status === 201) {
    draft.note(`fault.${fault.kind}`, 'missed', `sent again although the create it gave up on had been carried out: a duplicate shipment (${what})`);
    return;
  }
  draft.note(`fault.${fault.kind}`, 'handled', `retried: ${what}`);
  const wait = fault.retryAfterMs;
  if (typeof wait !== 'number') return;
  // Seconds count from when the answer went out, where this replica knows it; else (and a date, read at arrival) from when the request arrived.
  const out = fault.origin === undefined || fault.dated === 1 ? undefined : judging.answeredAt?.(fault.origin);
  const from = typeof out === 'number' && out <= retry.wall ? out : fault.wall;
  const waitedReal = retry.wall - from >= wait - RETRY_AFTER_SLACK_MS;
  const onTheClock = judging.manualClock && fault.realTime !== 1;
  const waited = waitedReal || (onTheClock && served.arrivedAt - fault.at >= wait);
  const sandboxTime = onTheClock && !waitedReal ? `, ${served.arrivedAt - fault.at} ms of the manual clock` : '';
  draft.judge('fault.retry-after', waited, `retried after ${retry.wall - from} ms${sandboxTime} (Retry-After ${wait} ms): ${what}`);
}

/**
 * A request of an operation whose Retry-After has not ended, other than the retry itself, is
 * hammering it: one miss per Retry-After. The Retry-After starts when its answer went out
 * where that is known (this replica's): a request that arrived before then (a worker pool's,
 * on its way already) could not have read it, and is not judged against it.
 */
function noteHammering(judging: Judging, draft: Draft, window: ReportMark, op: string, kept: Observed, wall: number, what: string): void {
  const out = window.origin === undefined ? undefined : judging.answeredAt?.(window.origin);
  const opened = out === 'waiting' ? Infinity : (out ?? window.wall);
  if (wall < opened) return;
  const wait = Number(window.detail.retry_after_ms);
  // A date's wait was counted from the mark's time (see the window mark); seconds from when the answer went out.
  const start = window.detail.dated === 1 ? window.wall : opened;
  const over = wall - start >= wait - RETRY_AFTER_SLACK_MS || (judging.manualClock && window.detail.real_time !== 1 && kept.served.arrivedAt - window.at >= wait);
  draft.mark(windowKey(op), null);
  if (!over) draft.judge('fault.retry-after', false, `another request of the operation sent ${wall - start} ms into a Retry-After of ${wait} ms: ${what}`);
}

/**
 * A 400 that refused only the sandbox's own controls (a `Prefer` status the operation does not
 * document, its `__code` query, an unknown `X-Sandbox-Scenario`): the client's test setup, not
 * a request the provider would have refused, so it shows nothing of the client's handling.
 */
export const refusedControl = ({ status, violations }: Observed['served']): boolean =>
  status === 400 && violations.length > 0 && violations.every(({ field }) => field === 'header.prefer' || field.startsWith('query.__') || field.startsWith('header.x-sandbox-'));

/**
 * What one provider request shows of the client: how it answered what an earlier answer
 * asked of it (a retry, an error sent again), the fault it met, and what a create or a
 * tracking read exercised.
 */
export async function judgeRequest(judging: Judging, clientId: string, kept: Observed, wall: number, state: ReportView): Promise<Draft> {
  const { served } = kept;
  const draft = new Draft(served.arrivedAt);
  if (refusedControl(served)) return draft;
  const op = served.input.operation.operationId;
  const here = { at: served.arrivedAt, wall, origin: `${judging.replica}:${served.seq}` };
  const what = describe(kept);

  // What the client did next, after an answer that asked something of it. A retry is the same request again (path and
  // body); another request of the operation leaves the one that met the fault waiting for its retry (see grade).
  const print = printOf(kept, state);
  // Only marks of requests that arrived before this one are its to answer (one judged as it
  // was answered can be judged before an earlier request that closed after it).
  const before = (key: string): ReportMark | undefined => markBefore(judging, state.marks, key, served.seq);
  // A report written before retries were marked per request has one mark per operation.
  const legacy = before(`retry:${op}`)?.detail.fingerprint === print ? `retry:${op}` : undefined;
  const retryAt = before(retryKey(op, print)) ? retryKey(op, print) : legacy;
  const retryMark = retryAt === undefined ? undefined : state.marks[retryAt];
  // A request sent before the answer that set a mark went out (a worker pool's, on its way already) answers nothing of it: not its retry, nor the end of its window.
  const sentBefore = (mark: ReportMark | undefined): boolean => {
    const out = mark?.origin === undefined ? undefined : judging.answeredAt?.(mark.origin);
    return out === 'waiting' || (typeof out === 'number' && wall < out);
  };
  if (retryAt && retryMark && !sentBefore(retryMark)) {
    draft.mark(retryAt, null);
    const { kind, retry_after_ms: retryAfterMs, ran, real_time: realTime, dated } = retryMark.detail;
    noteRetry(judging, draft, { kind: String(kind), retryAfterMs, at: retryMark.at, wall: retryMark.wall, ran, realTime, dated, ...(retryMark.origin === undefined ? {} : { origin: retryMark.origin }) }, { kept, wall });
  }
  const window = state.marks[windowKey(op)];
  if (window?.detail.fingerprint === print) {
    if (!sentBefore(window)) draft.mark(windowKey(op), null);
  } else if (window) noteHammering(judging, draft, window, op, kept, wall, what);
  const error = before(`error:${op}`);
  const refusal = error || state.marks[`refused:${op}`] ? kept.refusal() : undefined; // read only if a refusal is to be compared
  // A refused request missed already (see below) is not also handled by the change after it.
  if (error) {
    draft.mark(`error:${op}`, null);
    if (error.detail.fingerprint !== refusal && error.detail.missed !== 1) draft.note(String(error.detail.item), 'handled', `changed before sending again: ${what}`);
  }
  // A refused request sent again unchanged: missed when it is refused again right after, or a
  // third time later (a retry queue; a test suite run twice with one bad fixture sends it twice);
  // answered otherwise, the refusal was not the request's (a Prefer, a permission granted since).
  // Each refused request ends handled or missed once: sent again right after, the one before is
  // the miss, unless it was missed already; then, and sent a third time or more (right after or
  // later), this one is, and its mark says so.
  const refused = refusal === undefined ? undefined : before(refusedKey(op, refusal));
  let missedItself = false;
  if (refused) {
    const again = served.status === refused.detail.status;
    const next = error?.detail.fingerprint === refusal;
    if (!again) {
      draft.mark(refusedKey(op, refusal!), null);
      // Handled when the last refusal was this request's, right before it, and not missed already (sent a third
      // time): with another request between, that one settled it (changed before sending again, or missed).
      if (next && error?.detail.missed !== 1) draft.note(String(refused.detail.item), 'handled', `sent again and answered ${served.status ?? 'nothing'}: the refusal was not the request's: ${what}`);
    } else if (next || Number(refused.detail.sent) >= 2) {
      const third = Number(refused.detail.sent) >= 2;
      const beforeIsMiss = next && error?.detail.missed !== 1;
      if (beforeIsMiss) draft.note(String(refused.detail.item), 'missed', `sent again unchanged: ${what}`);
      missedItself = third || !beforeIsMiss;
      if (missedItself) draft.note(String(refused.detail.item), 'missed', third ? `sent again unchanged, ${Number(refused.detail.sent) + 1} times in all: ${what}` : `sent again unchanged: ${what}`);
    }
  }
  // The shipments of a create the client gave up on, which the sandbox carried out, sent again under new order codes: a duplicate too,
  // also once its AWB webhook was acknowledged (a receiver that answers shows nothing of what the create logic knows).
  if (op === 'createOrder' && kept.content && served.status === 201 && state.marks[CONTENT_SEEN]) {
    const content = state.marks[contentKey(kept.content())];
    const waiting = content && state.marks[String(content.detail.retry)];
    if (content && waiting && waiting.detail.fingerprint !== print) {
      draft.mark(String(content.detail.retry), null);
      draft.mark(contentKey(kept.content()), null);
      const first = shownCode(typeof waiting.detail.codes === 'string' ? waiting.detail.codes : undefined, kept.secrets);
      const gaveUp = first === undefined ? '' : ` (order code ${first})`;
      draft.note(`fault.${String(waiting.detail.kind)}`, 'missed', `sent again under new order codes although the create it gave up on${gaveUp} had been carried out: a duplicate shipment (${what})`);
    }
  }

  const { fault } = kept;
  // Any 503 and a fault rule's 429 ask for the request again (see asksAgain).
  // A held request is never answered: the client gives up on it (judged as it is held, see marksOnAnswer).
  const timedOut = (fault?.type === 'hang' && served.status === null) || ((fault?.type === 'latency' || fault?.type === 'dribble') && served.aborted);
  const faultKind = asksAgain(kept) ? '503-retried' : timedOut ? 'timeout' : fault?.type === 'reset' ? 'dropped' : undefined;
  if (faultKind) {
    draft.note(`fault.${faultKind}`, 'exercised', what);
    const said = fault?.type === 'status' ? headerOf(fault.headers, 'retry-after') : served.input.retryAfter;
    const wait = retryAfterMs(said, wall) ?? null;
    const dated = wait !== null && !/^\d+$/.test(said!.trim()) ? 1 : null;
    const ran = op === 'createOrder' && ranAnyway(fault) ? 1 : null;
    // A 503 neither a fault rule nor a Prefer made is the sandbox's own outage (a store that cannot write): it lasts in real time.
    const realTime = fault === undefined && served.input.mocked !== true ? 1 : null;
    // Compared as the provider reads it from now on (see SAME_SEEN).
    const same = op === 'createOrder' ? kept.same() : print;
    const retried = judging.recent.find((r) => r.kept.served.seq > served.seq && r.kept.served.input.operation.operationId === op && (op === 'createOrder' ? r.kept.same() : r.kept.fingerprint()) === same);
    if (retried) {
      noteRetry(judging, draft, { kind: faultKind, retryAfterMs: wait, ran, realTime, dated, ...here }, retried);
      return draft;
    }
    // A create carried out whose AWB webhook the client acknowledged before this was judged (its connection held open by a dribble, say): it heard of it.
    const heard = ran === 1 && (await acknowledged(judging, clientId, kept.created)) ? 1 : null;
    if (heard) draft.note(`fault.${faultKind}`, 'handled', `not sent again: the create it gave up on was carried out, and the AWB webhook of its order ${kept.created?.[0] ?? ''} was acknowledged`);
    draft.mark(retryKey(op, same), { ...here, detail: { kind: faultKind, retry_after_ms: wait, fingerprint: same, ran, codes: ran === 1 ? kept.codes : null, heard, real_time: realTime, dated } });
    if (op === 'createOrder' && !state.marks[SAME_SEEN]) draft.mark(SAME_SEEN, { ...here, detail: {} });
    if (ran === 1 && kept.content) {
      draft.mark(contentKey(kept.content()), { ...here, detail: { retry: retryKey(op, same) } });
      draft.mark(CONTENT_SEEN, { ...here, detail: {} });
    }
    if (typeof wait === 'number') {
      // The window's time is when the answer was made; a date's wait, read at arrival, is counted from there.
      const made = Math.round(here.wall + served.durationMs);
      draft.mark(windowKey(op), { at: here.at, wall: made, origin: here.origin, detail: { retry_after_ms: dated === 1 ? Math.max(0, wait - (made - here.wall)) : wait, fingerprint: same, real_time: realTime, dated } });
    }
    return draft;
  }
  // An answer a fault rule made up (a 201 with a body of its own, say), or a documented example a
  // Prefer asked for (a canned 201 that stored nothing), shows nothing of the operation; a Prefer's 4xx is the error it asked to meet.
  if (fault?.type === 'status' || (served.input.mocked === true && served.status !== null && served.status < 400)) return draft;

  if (op === 'createOrder') judgeCreate(kept, draft, what, here, state);
  if (op === 'trackOrder') await judgeTracking(judging, clientId, kept, draft, what, here, state);
  const ownError = draft.change.marks[`error:${op}`];
  if (missedItself && ownError) ownError.detail.missed = 1;
  return draft;
}
