import { SEEN_ID_ACKNOWLEDGED, SEEN_ID_REFUSED, type Attempt, type Delivery, type ReportView } from '../records/index.js';
import { reachedReceiver } from '../webhooks/index.js';
import { Draft } from './draft.js';

const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;
/** A 4xx that refuses the message: a 408 or 429 says the receiver was busy, not that it refused it. */
const isRefusal = (status: number | null): boolean => status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429;

/** What one webhook attempt shows of the client's receiver (and, acknowledged, of a create the client gave up on). */
export function judgeAttempt(delivery: Delivery, attempt: Attempt, at: number, state?: ReportView): Draft {
  const draft = new Draft(at);
  const what = `${delivery.id} attempt ${delivery.attempts.length + 1}${attempt.chaos ? ` (${attempt.chaos})` : ''} → ${attempt.status_code ?? attempt.error}`;
  const ok = isSuccess(attempt.status_code);
  const receiver = delivery.endpoint_id ?? 'default';
  if (attempt.chaos === 'bad_signature') {
    // The forged copy comes under the webhook-id just acknowledged, so a refusal may be of the id, not of the signature. It
    // is the signature's only from a receiver seen acknowledging a seen id (this message's duplicate copy, or another's to
    // the same endpoint in the run) and never seen refusing one. Another endpoint is another receiver.
    const copies = delivery.attempts.filter((a) => a.chaos === 'duplicate');
    const refusesSeen = copies.some((a) => isRefusal(a.status_code)) || state?.marks[SEEN_ID_REFUSED + receiver] !== undefined;
    const acknowledgesSeen = copies.some((a) => isSuccess(a.status_code)) || state?.marks[SEEN_ID_ACKNOWLEDGED + receiver] !== undefined;
    const refusal = isRefusal(attempt.status_code);
    const refused = refusal && acknowledgesSeen && !refusesSeen;
    const unsure = !ok && !refused;
    const why = refusesSeen
      ? 'as a duplicate copy was (this message’s, or one earlier in the run to this endpoint)'
      : 'and no duplicate copy to this endpoint was acknowledged before it in the run (send bad_signature with duplicate: X-Sandbox-Webhook-Chaos: duplicate,bad_signature)';
    draft.judge('webhook.bad-signature', ok ? false : refused ? true : undefined, unsure && refusal ? `${what}, ${why}: not told apart from a refusal of a seen webhook-id` : what);
    return draft;
  }
  // What a receiver does with a duplicate beyond its answer happens on its side, where the sandbox does not see.
  if (attempt.chaos === 'duplicate') {
    draft.judge('webhook.duplicate', ok, what);
    if (isRefusal(attempt.status_code)) draft.mark(SEEN_ID_REFUSED + receiver, { at, wall: Date.now(), detail: { delivery: delivery.id } });
    else if (ok && state?.marks[SEEN_ID_ACKNOWLEDGED + receiver] === undefined) draft.mark(SEEN_ID_ACKNOWLEDGED + receiver, { at, wall: Date.now(), detail: { delivery: delivery.id } });
    return draft;
  }
  draft.judge('webhook.awb-acknowledged', ok ? true : undefined, what);
  if (ok && state) heardOfCreate(draft, delivery, state);
  // The client's own failure: a refusal of a forged attempt (bad_signature) is what it should do, not a failure; one its listener never forwarded is none of its receiver's.
  const failedBefore = delivery.attempts.some((a) => a.chaos !== 'duplicate' && a.chaos !== 'bad_signature' && !isSuccess(a.status_code) && reachedReceiver(a));
  if (attempt.trigger === 'schedule' && failedBefore) draft.judge('webhook.retry-acknowledged', ok ? true : undefined, what);
  return draft;
}

/**
 * A create the client gave up on that the sandbox carried out anyway (a latency, a dribble, a
 * reset after a delay) waits for its retry; a client that did not send it again but learned of
 * its order from the AWB webhook handled it (sending it again makes a duplicate shipment).
 */
function heardOfCreate(draft: Draft, delivery: Delivery, state: ReportView): void {
  let code: unknown;
  for (const key in state.marks) {
    const mark = state.marks[key]!;
    if (mark.detail.ran !== 1 || mark.detail.heard === 1 || !key.startsWith('retry:createOrder:') || typeof mark.detail.codes !== 'string') continue;
    code ??= orderCodeOf(delivery.body);
    if (typeof code !== 'string' || !mark.detail.codes.split('\n').includes(code)) continue;
    // Kept, as heard: sent again afterwards, it is still a duplicate shipment.
    draft.mark(key, { ...mark, detail: { ...mark.detail, heard: 1 } });
    draft.note(`fault.${String(mark.detail.kind)}`, 'handled', `not sent again: the create it gave up on was carried out, and the AWB webhook of its order ${delivery.order_no ?? ''} (${code}) was acknowledged`);
    return;
  }
}

const orderCodeOf = (body: string): unknown => {
  try {
    return (JSON.parse(body) as { order_code?: unknown }).order_code;
  } catch {
    return undefined;
  }
};
