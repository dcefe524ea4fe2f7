import type { ReportView } from '../records/index.js';
import type { BatchReads } from './batch-reads.js';
import { Draft } from './draft.js';
import type { Observed } from './observed.js';
import { headerOf, retryAfterMs } from './retry-after.js';

/** Reads of an AWB closer together than this (sandbox time) after a 404 are polling it again at once. */
export const POLL_AGAIN_MS = 1000;
/** Slack on Retry-After for clocks and timers (real ms). */
const RETRY_AFTER_SLACK_MS = 100;

/** Per client, the AWBs whose duplicate delivery is being answered, and whether a tracking read came meanwhile. */
export type OpenDuplicates = Map<string, Map<string, { read: boolean }>>;

/** What judging a request reads besides the request and the report: the store (through its batch's reads), and the duplicates being answered. */
export interface Judging {
  reads: BatchReads;
  duplicates: OpenDuplicates;
}

/** Starts the store reads that judging this request will ask for (see BatchReads). */
export function prefetchFor(reads: BatchReads, { served }: Observed): void {
  if (served.input.operation.operationId === 'trackOrder' && (served.status === 200 || served.status === 404)) void reads.order(served.input.params.order_no ?? '');
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
  // The path is cut at 200 characters: every event keeps its note, so a long path would be kept once per event.
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
  const order = await judging.reads.order(awb);
  if (served.status === 200) {
    draft.judge('op.tracking', true, what);
    const atEnd = order?.client_id === clientId && order.next_step === null && order.history.length > 0;
    draft.judge('journey.read-to-end', atEnd ? true : undefined, atEnd ? `the journey's last step: ${what}` : what);
  }
  if (order?.client_id !== clientId) return;
  const duplicate = judging.duplicates.get(clientId)?.get(awb);
  if (duplicate) duplicate.read = true;
  const announced = await judging.reads.announced(clientId, order.order_no);
  if (announced.length === 0) return;
  const acknowledged = announced.some((d) => d.status === 'delivered') && !duplicate;
  draft.judge('tracking.after-webhook', acknowledged, acknowledged ? `after the AWB webhook was acknowledged: ${what}` : `before the AWB webhook was acknowledged: ${what}`);
}
