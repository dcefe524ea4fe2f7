import { randomBytes } from 'node:crypto';
import { Conflict } from '../shared/index.js';
import type { Endpoint, ListenerRelay, TargetGuard } from '../webhooks/index.js';
import { admits, reachedReceiver, signedHeaders, wrongSecret, send, type SendResult } from '../webhooks/index.js';
import { DEFAULT_ENDPOINT, LISTENER_PREFIX, type AwbGeneratedPayload, type CheckResult } from '../records/index.js';
/** How far back the stale step stamps its message: twice the Standard Webhooks tolerance of 5 minutes. */
export const STALE_MS = 10 * 60_000;

/** One step of the fixed sequence: what it sends and what it expects. */
interface CheckStep {
  id: 'valid' | 'duplicate' | 'bad_signature' | 'stale_timestamp' | 'unknown_order';
  expected: '2xx' | '4xx';
  /** Which message it sends: the valid one, or the one for an order the client does not know. */
  message: 'valid' | 'unknown';
  /**
   * True: under the `webhook-id` of the step before it (the duplicate). Else under an id
   * of its own, never seen by the receiver: a refusal of a bad signature or a stale
   * timestamp is then of the signing alone, not of an id the receiver had acknowledged.
   */
  repeats?: true;
  signing: 'right' | 'wrong' | 'stale';
}

/** The documented sequence of `POST /__sandbox/checks`, in order. */
export const CHECK_STEPS: readonly CheckStep[] = [
  { id: 'valid', expected: '2xx', message: 'valid', signing: 'right' },
  { id: 'duplicate', expected: '2xx', message: 'valid', signing: 'right', repeats: true },
  { id: 'bad_signature', expected: '4xx', message: 'valid', signing: 'wrong' },
  { id: 'stale_timestamp', expected: '4xx', message: 'valid', signing: 'stale' },
  { id: 'unknown_order', expected: '2xx', message: 'unknown', signing: 'right' },
];

/** The AWB webhook messages the checks send: about one of the client's orders where it has one with an AWB. */
export interface CheckMessages {
  valid: AwbGeneratedPayload;
  unknown: AwbGeneratedPayload;
}

/** Why an endpoint without a URL cannot be graded, and what to do. */
function noUrl(endpoint: Endpoint): string {
  if (endpoint.id === DEFAULT_ENDPOINT) return 'The default webhook endpoint has no URL: set one with PUT /__sandbox/webhook, or grade another endpoint with ?endpoint_id=ep_..., then run the checks.';
  return `The endpoint ${endpoint.id} delivers to the listen session "${endpoint.listener}", which this sandbox cannot reach.`;
}

/** Why a listener endpoint cannot be graded now. */
const notConnected = (endpoint: Endpoint): string =>
  `The endpoint ${endpoint.id} delivers to the listen session "${endpoint.listener}", which is not connected: start \`shipping-sandbox listen --name ${endpoint.listener}\` (its receiver running), then run the checks.`;

/** Why a disabled endpoint cannot be graded, and how to enable it again. */
function disabled(endpoint: Endpoint): string {
  const again = endpoint.id === DEFAULT_ENDPOINT ? 'set it again with PUT /__sandbox/webhook' : `enable it again with PATCH /__sandbox/webhooks/endpoints/${endpoint.id} {"enabled": true}`;
  return `The webhook endpoint ${endpoint.id} is disabled (${endpoint.disabled_reason}): ${again}.`;
}

const answered = (result: Pick<SendResult, 'status_code' | 'error'>): string => (result.status_code !== null ? String(result.status_code) : `no answer (${result.error})`);

function passes(expected: CheckStep['expected'], status: number | null): boolean {
  if (status === null) return false;
  return expected === '2xx' ? status >= 200 && status < 300 : status >= 400 && status < 500;
}

/** What a run needs besides the endpoint and its messages. */
export interface CheckDeps {
  guard: TargetGuard;
  timeoutMs: number;
  now: () => number;
  shutdown: AbortSignal;
  /** The endpoint as it is now (read again before each step after the first); undefined once it is gone. */
  current: () => Promise<Endpoint | undefined>;
  /** How a listener endpoint is reached (its listen session); without it, such an endpoint cannot be graded. */
  relay?: Pick<ListenerRelay, 'attempt'>;
  /** The client whose endpoint it is (a listener's attempts name it). */
  clientId: string;
}

/**
 * Sends the client's webhook endpoint the fixed sequence, signed as every webhook is
 * and through the target policy, and records each answer with the endpoint's id. A step
 * after one that got no answer at all is not run, nor one after the endpoint was
 * deleted, disabled or pointed elsewhere during the run.
 */
export async function runChecks(endpoint: Endpoint, messages: CheckMessages, deps: CheckDeps): Promise<CheckResult[]> {
  const { relay } = deps;
  const listener = endpoint.listener !== null && relay ? endpoint.listener : undefined;
  if (!endpoint.url && listener === undefined) throw new Conflict(noUrl(endpoint));
  if (!endpoint.enabled) throw new Conflict(disabled(endpoint));
  if (!admits(endpoint, 'awb.generated')) throw new Conflict(`The endpoint ${endpoint.id} does not take awb.generated (its events filter), which every check sends: grade an endpoint that takes it.`);
  // In the format of every delivery id: a receiver posted to cannot tell the checks from real messages by their ids (a listener is told, see the guide).
  const newId = (): string => `msg_${randomBytes(12).toString('hex')}`;
  let id = newId();
  const results: CheckResult[] = [];
  const result = (step: CheckStep, status: CheckResult['status'], got: string): CheckResult => ({ id: step.id, endpoint_id: endpoint.id, status, expected: step.expected, got, at: deps.now() });
  let stopped: string | undefined;
  for (const [i, step] of CHECK_STEPS.entries()) {
    if (stopped === undefined && i > 0) stopped = changedSince(endpoint, await deps.current());
    if (stopped !== undefined) {
      results.push(result(step, 'not_run', `not run: ${stopped}`));
      continue;
    }
    if (!step.repeats && i > 0) id = newId();
    const message = { id, body: JSON.stringify(messages[step.message]), secret: step.signing === 'wrong' ? wrongSecret(id) : endpoint.secret, sentAt: step.signing === 'stale' ? new Date(Date.now() - STALE_MS) : new Date() };
    let sent: Omit<SendResult, 'webhook_timestamp'>;
    if (listener !== undefined) {
      // Through the listen session, as a delivery to it goes: the same headers a direct POST carries.
      const relayed = await relay!.attempt(
        { client_id: deps.clientId, listener, delivery_id: `check_${step.id}`, event: 'awb.generated', order_no: messages[step.message].order_no, timeout_ms: deps.timeoutMs, headers: signedHeaders(id, message.body, message.secret, message.sentAt), body: message.body, check: step.id, secret: endpoint.secret },
        deps.shutdown,
      );
      if (relayed === 'not_connected' && i === 0) throw new Conflict(notConnected(endpoint));
      sent = relayed === 'not_connected' || relayed === undefined ? { status_code: null, duration_ms: 0, error: relayed === undefined ? 'the sandbox is stopping' : 'the listener is no longer connected', response_body: '', retry_after: null } : relayed;
      // Never put to the receiver (the listener's queue ran it out, it is stopping): nothing to grade it by.
      if (relayed !== 'not_connected' && relayed !== undefined && !reachedReceiver({ url: LISTENER_PREFIX, ...relayed })) {
        stopped = `the listener did not forward it (${answered(sent)})`;
        results.push(result(step, 'not_run', `not run: ${stopped}`));
        continue;
      }
    } else {
      const { agent, refusal } = deps.guard.route(endpoint.url!, endpoint.source !== 'runtime');
      sent = await send({ url: endpoint.url!, ...message, timeoutMs: deps.timeoutMs, shutdown: deps.shutdown, dispatcher: agent, refusal });
    }
    if (sent.status_code === null) stopped = `an earlier step got ${answered(sent)}`;
    results.push(result(step, passes(step.expected, sent.status_code) ? 'passed' : 'failed', answered(sent)));
  }
  return results;
}

/** Why the run must stop, when the endpoint is no longer the one it began with. */
function changedSince(began: Endpoint, now: Endpoint | undefined): string | undefined {
  if (!now) return `the endpoint ${began.id} was deleted during the run`;
  if (!now.enabled) return `the endpoint ${began.id} was disabled during the run`;
  if (now.url !== began.url || now.secret !== began.secret) return `the endpoint ${began.id} was changed during the run`;
  return undefined;
}
