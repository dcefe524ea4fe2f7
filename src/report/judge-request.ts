import type { ReportView } from '../records/index.js';
import type { BatchReads } from './batch-reads.js';
import { Draft } from './draft.js';
import type { Observed } from './observed.js';
import { headerOf, retryAfterMs } from './retry-after.js';

/**
 * Reads of an AWB closer together than this after a 404 are polling it again at once: real
 * time, as the client's timers run on it (a fast clock does not make a tight loop a wait),
 * and on a manual clock the test's advance too, as for Retry-After.
 */
export const POLL_AGAIN_MS = 1000;
/** Slack on Retry-After for clocks and timers (real ms). */
const RETRY_AFTER_SLACK_MS = 100;

/**
 * What judging a request reads besides the request and the report: the store (through
 * its batch's reads), and whether the sandbox runs a manual clock. On a manual clock a
 * test moves the sandbox's time where a client's timers would wait (its timers driven by
 * the test), so a wait of Retry-After counts in sandbox time too; on a real clock, at
 * any speed, only real time counts, as the client's timers run on it.
 */
export interface Judging {
  reads: BatchReads;
  manualClock: boolean;
  /**
   * The client's creates and tracking reads judged just before this request, oldest
   * first (a few): a retry that closed before the request it retries (sent once the
   * client gave up on a hung one, say) was judged first.
   */
  recent: readonly Judged[];
}

/** A request as judged, with when it arrived in real time (epoch ms). */
export interface Judged {
  kept: Observed;
  wall: number;
}

/** A fault the client met, and when (sandbox and real time). */
interface MetFault {
  kind: string;
  retryAfterMs: unknown;
  at: number;
  wall: number;
}

/** Notes the retry of a request that met a fault, and whether it waited what Retry-After said. */
function noteRetry(judging: Judging, draft: Draft, fault: MetFault, retry: Judged): void {
  const { served } = retry.kept;
  const what = describe(served);
  draft.note(`fault.${fault.kind}`, 'handled', `retried: ${what}`);
  const wait = fault.retryAfterMs;
  if (typeof wait !== 'number') return;
  const waitedReal = retry.wall - fault.wall >= wait - RETRY_AFTER_SLACK_MS;
  const waited = waitedReal || (judging.manualClock && served.arrivedAt - fault.at >= wait);
  const sandboxTime = judging.manualClock && !waitedReal ? `, ${served.arrivedAt - fault.at} ms of the manual clock` : '';
  draft.judge('fault.retry-after', waited, `retried after ${retry.wall - fault.wall} ms${sandboxTime} (Retry-After ${wait} ms): ${what}`);
}

/** A request as its events name it: method, path (cut at 200 characters: every event keeps its note) and answer. */
function describe(served: Observed['served']): string {
  const path = served.input.path.length <= 200 ? served.input.path : `${served.input.path.slice(0, 200)}…`;
  return `${served.method} ${path} → ${served.status ?? 'no answer'}`;
}

/**
 * What one provider request shows of the client: how it answered what an earlier answer
 * asked of it (a retry, an error sent again), the fault it met, and what a create or a
 * tracking read exercised.
 */
export async function judgeRequest(judging: Judging, clientId: string, kept: Observed, wall: number, state: ReportView): Promise<Draft> {
  const { served } = kept;
  const draft = new Draft(served.arrivedAt);
  const op = served.input.operation.operationId;
  const here = { at: served.arrivedAt, wall };
  const what = describe(served);

  // What the client did next, after an answer that asked something of it. A retry is the
  // same request again (path and body): another request of the operation leaves the one
  // that met the fault waiting for its retry.
  const retry = state.marks[`retry:${op}`];
  if (retry && (retry.detail.fingerprint === undefined || retry.detail.fingerprint === kept.fingerprint())) {
    draft.mark(`retry:${op}`, null);
    noteRetry(judging, draft, { kind: String(retry.detail.kind), retryAfterMs: retry.detail.retry_after_ms, at: retry.at, wall: retry.wall }, { kept, wall });
  }
  const error = state.marks[`error:${op}`];
  if (error) {
    draft.mark(`error:${op}`, null);
    const same = error.detail.fingerprint === kept.fingerprint();
    draft.note(String(error.detail.item), same ? 'missed' : 'handled', same ? `sent again unchanged: ${what}` : `changed before sending again: ${what}`);
  }

  const { fault } = kept;
  // Any 503 asks for the request again: a fault rule's, a Prefer: code=503, a store that cannot write (only a rule's Retry-After is known here).
  const faultKind = served.status === 503 && (fault === undefined || fault.type === 'status') ? '503-retried' : (fault?.type === 'hang' || fault?.type === 'latency' || fault?.type === 'dribble') && served.aborted ? 'timeout' : fault?.type === 'reset' ? 'dropped' : undefined;
  if (faultKind) {
    draft.note(`fault.${faultKind}`, 'exercised', what);
    const wait = fault?.type === 'status' ? retryAfterMs(headerOf(fault.headers, 'retry-after'), wall) : null;
    const print = kept.fingerprint();
    const retried = judging.recent.find((r) => r.kept.served.seq > served.seq && r.kept.served.input.operation.operationId === op && r.kept.fingerprint() === print);
    if (retried) {
      noteRetry(judging, draft, { kind: faultKind, retryAfterMs: wait, ...here }, retried);
      return draft;
    }
    // One request of the operation waits for its retry at a time: one still waiting when another meets a fault was not retried before it.
    const waiting = state.marks[`retry:${op}`];
    if (waiting && draft.change.marks[`retry:${op}`] !== null && waiting.detail.fingerprint !== print) {
      draft.note(`fault.${String(waiting.detail.kind)}`, 'missed', `not sent again before another request of the operation met a fault: ${what}`);
    }
    draft.mark(`retry:${op}`, { ...here, detail: { kind: faultKind, retry_after_ms: wait, fingerprint: print } });
    return draft;
  }
  // An answer a fault rule made up (a 201 with a body of its own, say), or a documented example a
  // Prefer asked for (a canned 201 that stored nothing), shows nothing of the operation; a Prefer's 4xx is the error it asked to meet.
  if (fault?.type === 'status' || (served.input.mocked === true && served.status !== null && served.status < 400)) return draft;

  if (op === 'createOrder') judgeCreate(kept, draft, what, here);
  if (op === 'trackOrder') await judgeTracking(judging, clientId, kept, draft, what, here, state);
  return draft;
}

/** A create: a success counts the operation (and a multi-item order); a 400 or 403 marks an error the client should not send again unchanged. */
function judgeCreate({ served, items, fingerprint: print }: Observed, draft: Draft, what: string, here: { at: number; wall: number }): void {
  if (served.status === 201) {
    draft.judge('op.create-order', true, what);
    if (items >= 2) draft.judge('create.multi-item', true, `${items} items: ${what}`);
  } else if (served.status === 400 || served.status === 403) {
    const item = `error.create-${served.status}`;
    draft.note(item, 'exercised', what);
    draft.mark('error:createOrder', { ...here, detail: { item, fingerprint: print() } });
  }
}

/** A tracking read: polling again after a 404, reading to the journey's end, reading after the AWB webhook was acknowledged. */
async function judgeTracking(judging: Judging, clientId: string, { served, fingerprint: print }: Observed, draft: Draft, what: string, here: { at: number; wall: number }, state: ReportView): Promise<void> {
  const awb = served.input.params.order_no ?? '';
  const polled = state.marks[`404:${awb}`];
  if (polled) {
    draft.mark(`404:${awb}`, null);
    const real = Math.round(here.wall - polled.wall);
    const sandbox = served.arrivedAt - polled.at;
    const waited = real >= POLL_AGAIN_MS - RETRY_AFTER_SLACK_MS || (judging.manualClock && sandbox >= POLL_AGAIN_MS);
    const after = judging.manualClock ? `${real} ms (${sandbox} ms of the manual clock)` : `${real} ms`;
    draft.note('error.tracking-404', waited ? 'handled' : 'missed', waited ? `read again ${after} after its 404: ${what}` : `read again ${after} after its 404, polling it: ${what}`);
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
  // The client's order as the answer showed it (none: no order of the client has the AWB, or a magic AWB).
  const order = served.input.answeredOrder;
  if (served.status === 200) {
    draft.judge('op.tracking', true, what);
    const atEnd = order?.ended === true;
    draft.judge('journey.read-to-end', atEnd ? true : undefined, atEnd ? `the journey's last step: ${what}` : what);
  }
  if (!order) return;
  const announced = await judging.reads.announced(clientId, order.order_no);
  if (announced.length === 0) return;
  const acknowledged = announced.some((d) => d.status === 'delivered');
  draft.judge('tracking.after-webhook', acknowledged, acknowledged ? `after the AWB webhook was acknowledged: ${what}` : `before the AWB webhook was acknowledged: ${what}`);
}
