import { createHash } from 'node:crypto';
import { SEEN_ID_ACKNOWLEDGED, SEEN_ID_REFUSED, type Attempt, type Delivery, type ReportMark, type ReportView } from '../records/index.js';
import { MAX_ENDPOINTS, reachedReceiver } from '../webhooks/index.js';
import { Draft } from './draft.js';

const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;
/** Whether one of `attempts` was the message itself (no chaos copy), failed at a receiver that saw it. */
const failedBefore = (attempts: readonly Attempt[]): boolean => attempts.some((a) => a.chaos !== 'duplicate' && a.chaos !== 'bad_signature' && !isSuccess(a.status_code) && reachedReceiver(a));
/** A 4xx that refuses the message: a 408 or 429 says the receiver was busy, not that it refused it. */
const isRefusal = (status: number | null): boolean => status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429;

/**
 * A receiver as its marks name it: the endpoint (its id, `default` for the default one) at
 * the URL the attempt went to (a listener's `listener:<name>`). Another URL put on the
 * endpoint is another receiver.
 */
const receiverOf = (delivery: Delivery, attempt: Attempt): string => `${delivery.endpoint_id ?? 'default'}@${createHash('sha256').update(attempt.url).digest('hex').slice(0, 16)}`;

/** Most receivers a client's marks remember, those seen last: one for each endpoint it may have at once, its default one too. */
export const RECEIVERS_KEPT = MAX_ENDPOINTS + 1;

/** The receiver a mark is of, or undefined for another mark. */
const markedReceiver = (key: string): string | undefined =>
  key.startsWith(SEEN_ID_REFUSED) ? key.slice(SEEN_ID_REFUSED.length) : key.startsWith(SEEN_ID_ACKNOWLEDGED) ? key.slice(SEEN_ID_ACKNOWLEDGED.length) : undefined;

/**
 * Sets a receiver's mark. A receiver not marked yet, past RECEIVERS_KEPT, takes the place
 * of the one seen least recently, both its marks dropped together (its acknowledgement kept
 * alone, with its refusal gone, would credit it): endpoints and their URLs come and go in
 * a run, and the marks of the run are dropped last.
 */
function markReceiver(draft: Draft, key: string, mark: ReportMark, state: ReportView | undefined): void {
  const receiver = markedReceiver(key);
  if (state && receiver !== undefined) {
    const seen = new Map<string, number>();
    for (const other in state.marks) {
      const of = markedReceiver(other);
      if (of !== undefined) seen.set(of, Math.max(seen.get(of) ?? -Infinity, state.marks[other]!.wall));
    }
    if (!seen.has(receiver) && seen.size >= RECEIVERS_KEPT) {
      let least: [string, number] | undefined;
      for (const [other, wall] of seen) if (least === undefined || wall < least[1]) least = [other, wall];
      for (const prefix of [SEEN_ID_REFUSED, SEEN_ID_ACKNOWLEDGED]) if (state.marks[prefix + least![0]] !== undefined) draft.mark(prefix + least![0], null);
    }
  }
  draft.mark(key, mark);
}

/** What one webhook attempt shows of the client's receiver (and, acknowledged, of a create the client gave up on). */
export function judgeAttempt(delivery: Delivery, attempt: Attempt, at: number, state?: ReportView): Draft {
  const draft = new Draft(at);
  const what = `${delivery.id} attempt ${delivery.attempts.length + 1}${attempt.chaos ? ` (${attempt.chaos})` : ''} → ${attempt.status_code ?? attempt.error}`;
  const ok = isSuccess(attempt.status_code);
  if (attempt.chaos === 'bad_signature') {
    const receiver = receiverOf(delivery, attempt);
    // The forged copy comes under the webhook-id just acknowledged, so a refusal may be of the id, not of the signature. It
    // is the signature's only from a receiver seen acknowledging a seen id (this message's duplicate copy, or another's to
    // the same receiver in the run) and never seen refusing one. Another endpoint, or another URL, is another receiver.
    const copies = delivery.attempts.filter((a) => a.chaos === 'duplicate' && a.url === attempt.url);
    const refusesSeen = copies.some((a) => isRefusal(a.status_code)) || state?.marks[SEEN_ID_REFUSED + receiver] !== undefined;
    const acknowledgesSeen = copies.some((a) => isSuccess(a.status_code)) || state?.marks[SEEN_ID_ACKNOWLEDGED + receiver] !== undefined;
    const refusal = isRefusal(attempt.status_code);
    const refused = refusal && acknowledgesSeen && !refusesSeen;
    const unsure = !ok && !refused;
    const why = refusesSeen
      ? 'as a duplicate copy was (this message’s, or one earlier in the run to this endpoint and URL)'
      : 'and no duplicate copy to this endpoint and URL was acknowledged before it in the run (send bad_signature with duplicate: X-Sandbox-Webhook-Chaos: duplicate,bad_signature)';
    draft.judge('webhook.bad-signature', ok ? false : refused ? true : undefined, unsure && refusal ? `${what}, ${why}: not told apart from a refusal of a seen webhook-id` : what);
    return draft;
  }
  // What a receiver does with a duplicate beyond its answer happens on its side, where the sandbox does not see.
  if (attempt.chaos === 'duplicate') {
    draft.judge('webhook.duplicate', ok, what);
    const receiver = receiverOf(delivery, attempt);
    if (isRefusal(attempt.status_code)) markReceiver(draft, SEEN_ID_REFUSED + receiver, { at, wall: Date.now(), detail: { delivery: delivery.id } }, state);
    // Set again at each acknowledgement: the receiver was seen now (see RECEIVERS_KEPT).
    else if (ok) markReceiver(draft, SEEN_ID_ACKNOWLEDGED + receiver, { at, wall: Date.now(), detail: { delivery: delivery.id } }, state);
    return draft;
  }
  // Both items count deliveries, as their misses do (judgeGivenUp): exercised at a delivery's first attempt of the kind,
  // handled at its first acknowledgement. Attempts in between are neither: `Missed 10 of 10 times` is ten deliveries.
  // Only the attempts of the report's run count as earlier (a new run left the others out; one at the run's very
  // millisecond is taken as before it, so that the delivery's next attempt is judged whole in the run).
  // Nor is an attempt a listener never forwarded earlier: it was not judged (the dispatcher does not report it).
  const since = state?.run?.started_at ?? -Infinity;
  const earlier = delivery.attempts.filter((a) => a.chaos === null && a.at > since && reachedReceiver(a));
  const acknowledgedBefore = earlier.some((a) => isSuccess(a.status_code));
  judgeOnce(draft, 'webhook.awb-acknowledged', earlier.length === 0, ok && !acknowledgedBefore, what);
  // The client's own failure: a refusal of a forged attempt (bad_signature) is what it should do, not a failure; one its listener never forwarded is none of its receiver's.
  const retry = attempt.trigger === 'schedule' && failedBefore(delivery.attempts);
  if (ok) acknowledgedAfterAll(draft, delivery, state, retry);
  if (ok && state) heardOfCreate(draft, delivery, state);
  if (retry) {
    const retriedBefore = earlier.some((a) => a.trigger === 'schedule' && failedBefore(delivery.attempts.slice(0, delivery.attempts.indexOf(a))));
    judgeOnce(draft, 'webhook.retry-acknowledged', !retriedBefore, ok && !acknowledgedBefore, what);
  }
  return draft;
}

/** An item judged once per delivery: exercised at its `first` attempt, handled when it is `acknowledged` (then or later). */
function judgeOnce(draft: Draft, item: string, first: boolean, acknowledged: boolean, what: string): void {
  if (first) draft.judge(item, acknowledged ? true : undefined, what);
  else if (acknowledged) draft.note(item, 'handled', what);
}

/**
 * A delivery that failed for good at its receiver (its last retry failed, or it answered
 * 410 Gone): the receiver never acknowledged its AWB webhook, so the client never learned
 * the AWB from it (missed, where each failed attempt alone was only exercised: a retry
 * might still come), nor acknowledged a retry.
 */
export function judgeGivenUp(delivery: Delivery, attempt: Attempt, at: number): Draft {
  const draft = new Draft(at);
  const what = `${delivery.id}: failed after ${delivery.attempts.length} attempts, the last → ${attempt.status_code ?? attempt.error}; no retry is left`;
  draft.note('webhook.awb-acknowledged', 'missed', what);
  // As judgeAttempt exercised the retry item with this attempt: a scheduled one after a failure the receiver saw.
  const retried = attempt.trigger === 'schedule' && failedBefore(delivery.attempts.slice(0, -1));
  if (retried) draft.note('webhook.retry-acknowledged', 'missed', what);
  // Taken back if the delivery is acknowledged later in the run (redelivered, recovered): the client did get its AWB.
  draft.mark(GAVE_UP + delivery.id, { at, wall: Date.now(), detail: { retried: retried ? 1 : 0 } });
  return draft;
}

/** The mark of a delivery graded missed when its retries ran out, by the delivery's id (see judgeGivenUp). */
const GAVE_UP = 'gave-up:';

/**
 * A delivery graded missed when its retries ran out, acknowledged now: its misses taken back,
 * and its retries' acknowledgement counted (by this attempt's own judgment when it is a
 * scheduled retry, `retryJudged`; a redelivery is none).
 */
function acknowledgedAfterAll(draft: Draft, delivery: Delivery, state: ReportView | undefined, retryJudged: boolean): void {
  const mark = state?.marks[GAVE_UP + delivery.id];
  if (mark === undefined) return;
  draft.retract('webhook.awb-acknowledged', 'missed');
  if (mark.detail.retried === 1) {
    draft.retract('webhook.retry-acknowledged', 'missed');
    if (!retryJudged) draft.note('webhook.retry-acknowledged', 'handled', `${delivery.id}: acknowledged after its retries ran out`);
  }
  draft.mark(GAVE_UP + delivery.id, null);
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
