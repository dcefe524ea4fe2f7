import type { Attempt, Delivery } from '../records/index.js';
import { Draft } from './draft.js';

const isSuccess = (status: number | null): boolean => status !== null && status >= 200 && status < 300;
const isClientError = (status: number | null): boolean => status !== null && status >= 400 && status < 500;

/** What one webhook attempt shows of the client's receiver. */
export function judgeAttempt(delivery: Delivery, attempt: Attempt, at: number): Draft {
  const draft = new Draft(at);
  const what = `${delivery.id} attempt ${delivery.attempts.length + 1}${attempt.chaos ? ` (${attempt.chaos})` : ''} → ${attempt.status_code ?? attempt.error}`;
  const ok = isSuccess(attempt.status_code);
  if (attempt.chaos === 'bad_signature') {
    draft.judge('webhook.bad-signature', ok ? false : isClientError(attempt.status_code) ? true : undefined, what);
    return draft;
  }
  // What a receiver does with a duplicate beyond its answer happens on its side, where the sandbox does not see.
  if (attempt.chaos === 'duplicate') {
    draft.judge('webhook.duplicate', ok, what);
    return draft;
  }
  draft.judge('webhook.awb-acknowledged', ok ? true : undefined, what);
  // The client's own failure: a refusal of a forged attempt (bad_signature) is what it should do, not a failure.
  const failedBefore = delivery.attempts.some((a) => a.chaos !== 'duplicate' && a.chaos !== 'bad_signature' && !isSuccess(a.status_code));
  if (attempt.trigger === 'schedule' && failedBefore) draft.judge('webhook.retry-acknowledged', ok ? true : undefined, what);
  return draft;
}
