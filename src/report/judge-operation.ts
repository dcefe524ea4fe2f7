import type { ReportMark, ReportView } from '../records/index.js';
import type { Draft } from './draft.js';
import { RETRY_AFTER_SLACK_MS, markBefore, type Judging } from './judging.js';
import type { Observed } from './observed.js';

/**
 * Reads of an AWB closer together than this after a 404 are polling it again at once: real time, as the client's timers run on it (a fast clock
 * does not make a tight loop a wait), and on a manual clock the test's advance too, as for Retry-After. A 200 after a real 404 reads what changed.
 */
export const POLL_AGAIN_MS = 1000;

/** The mark of a refused request (a 400 or 403): the same request sent again later, whatever came between, is sent again unchanged. */
export const refusedKey = (op: string, print: string): string => `refused:${op}:${print}`;
/** Most refused requests of an operation remembered (see markRefused). */
const REFUSED_KEPT = 32;

/** A create: a success counts the operation (and a multi-item order); a 400 or 403 marks an error the client should not send again unchanged. */
export function judgeCreate({ served, items, refusal }: Observed, draft: Draft, what: string, here: { at: number; wall: number }, state: ReportView): void {
  if (served.status === 201) {
    draft.judge('op.create-order', true, what);
    if (items >= 2) draft.judge('create.multi-item', true, `${items} items: ${what}`);
  } else if (served.status === 400 || served.status === 403) {
    const item = `error.create-${served.status}`;
    draft.note(item, 'exercised', what);
    draft.mark('error:createOrder', { ...here, detail: { item, fingerprint: refusal() } });
    markRefused(draft, state, 'createOrder', refusal(), { ...here, detail: { item, status: served.status } });
  }
}

/** A tracking read: polling again after a 404, reading to the journey's end, reading after the AWB webhook was acknowledged. */
export async function judgeTracking(judging: Judging, clientId: string, { served, fingerprint: print }: Observed, draft: Draft, what: string, here: { at: number; wall: number }, state: ReportView): Promise<void> {
  const awb = served.input.params.order_no ?? '';
  const polled = markBefore(judging, state.marks, `404:${awb}`, served.seq);
  if (polled) {
    draft.mark(`404:${awb}`, null);
    const real = Math.round(here.wall - polled.wall);
    const sandbox = served.arrivedAt - polled.at;
    const movedOn = served.status === 200 && polled.detail.mocked !== 1; // a Prefer's 404 says nothing of the order
    const waited = movedOn || real >= POLL_AGAIN_MS - RETRY_AFTER_SLACK_MS || (judging.manualClock && sandbox >= POLL_AGAIN_MS);
    const after = `${judging.manualClock ? `${real} ms (${sandbox} ms of the manual clock)` : `${real} ms`} after its 404${movedOn ? ', the order having moved on' : ''}`;
    draft.note('error.tracking-404', waited ? 'handled' : 'missed', waited ? `read again ${after}: ${what}` : `read again ${after}, polling it: ${what}`);
  }
  if (served.status === 400) {
    draft.note('error.tracking-400', 'exercised', what);
    draft.mark('error:trackOrder', { ...here, detail: { item: 'error.tracking-400', fingerprint: print() } });
    markRefused(draft, state, 'trackOrder', print(), { ...here, detail: { item: 'error.tracking-400', status: 400 } });
    return;
  }
  // A magic AWB's answer never changes (its 404 is for good, its journey ended a week ago): the operation read, no order's journey nor its pick-up waited for.
  if (served.input.magicAwb === true) {
    if (served.status === 200) draft.judge('op.tracking', true, what);
    return;
  }
  if (served.status === 404) {
    draft.note('error.tracking-404', 'exercised', what);
    draft.mark(`404:${awb}`, { ...here, detail: served.input.mocked === true ? { awb, mocked: 1 } : { awb } });
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

/** Whether the AWB webhook of one of these orders (the first few) was acknowledged already. */
export async function acknowledged(judging: Judging, clientId: string, orders: readonly string[] | undefined): Promise<boolean> {
  for (const orderNo of orders?.slice(0, 10) ?? []) {
    if ((await judging.reads.announced(clientId, orderNo)).some((d) => d.status === 'delivered')) return true;
  }
  return false;
}

/**
 * Marks a refused request, keeping at most REFUSED_KEPT of the operation's: a client that
 * sends thousands of distinct bad bodies (a fuzzer) forgets its oldest, not the marks of
 * the report's other items (a client keeps MARKS_KEPT marks in all).
 */
function markRefused(draft: Draft, state: ReportView, op: string, print: string, mark: ReportMark): void {
  const key = refusedKey(op, print);
  const kept = Object.keys(state.marks).filter((k) => k.startsWith(refusedKey(op, '')) && k !== key);
  for (const old of kept.slice(0, Math.max(0, kept.length - REFUSED_KEPT + 1))) draft.mark(old, null);
  draft.mark(key, { ...mark, detail: { ...mark.detail, sent: Number(state.marks[key]?.detail.sent ?? 0) + 1 } });
  draft.mark(`refused:${op}`, { ...mark, detail: {} }); // the newest: outlives the operation's refusals, so a request finds them only where there are some
}
