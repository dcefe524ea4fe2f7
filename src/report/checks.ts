import { randomBytes } from 'node:crypto';
import { Conflict } from '../shared/index.js';
import type { Endpoint, TargetGuard } from '../webhooks/index.js';
import { wrongSecret, send, type SendResult } from '../webhooks/index.js';
import { DEFAULT_ENDPOINT, type AwbGeneratedPayload, type CheckResult } from '../records/index.js';
/** How far back the stale step stamps its message: twice the Standard Webhooks tolerance of 5 minutes. */
export const STALE_MS = 10 * 60_000;

/** One step of the fixed sequence: what it sends and what it expects. */
interface CheckStep {
  id: 'valid' | 'duplicate' | 'bad_signature' | 'stale_timestamp' | 'unknown_order';
  expected: '2xx' | '4xx';
  /** Which message it sends: the valid one, or the one for an order the client does not know. */
  message: 'valid' | 'unknown';
  signing: 'right' | 'wrong' | 'stale';
}

/** The documented sequence of `POST /__sandbox/checks`, in order. */
export const CHECK_STEPS: readonly CheckStep[] = [
  { id: 'valid', expected: '2xx', message: 'valid', signing: 'right' },
  { id: 'duplicate', expected: '2xx', message: 'valid', signing: 'right' },
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
  if (endpoint.id === DEFAULT_ENDPOINT) return 'No webhook URL is set for this client: set one with PUT /__sandbox/webhook, then run the checks.';
  return `The endpoint ${endpoint.id} delivers to the listen session "${endpoint.listener}", and the checks send to a URL: run them against the default endpoint or another with a URL (endpoint_id).`;
}

/** Why a disabled endpoint cannot be graded, and how to enable it again. */
function disabled(endpoint: Endpoint): string {
  const again = endpoint.id === DEFAULT_ENDPOINT ? 'set it again with PUT /__sandbox/webhook' : `enable it again with PATCH /__sandbox/webhooks/endpoints/${endpoint.id} {"enabled": true}`;
  return `The webhook endpoint ${endpoint.id} is disabled (${endpoint.disabled_reason}): ${again}.`;
}

const answered = (result: SendResult): string => (result.status_code !== null ? String(result.status_code) : `no answer (${result.error})`);

function passes(expected: CheckStep['expected'], status: number | null): boolean {
  if (status === null) return false;
  return expected === '2xx' ? status >= 200 && status < 300 : status >= 400 && status < 500;
}

/**
 * Sends the client's webhook endpoint the fixed sequence, signed as every webhook is
 * and through the target policy, and records each answer. A step after one that got
 * no answer at all is not run.
 */
export async function runChecks(endpoint: Endpoint, messages: CheckMessages, deps: { guard: TargetGuard; timeoutMs: number; now: () => number; shutdown: AbortSignal }): Promise<CheckResult[]> {
  if (!endpoint.url) throw new Conflict(noUrl(endpoint));
  if (!endpoint.enabled) throw new Conflict(disabled(endpoint));
  const url = endpoint.url;
  const ids = { valid: `msg_check_${randomBytes(8).toString('hex')}`, unknown: `msg_check_${randomBytes(8).toString('hex')}` };
  const results: CheckResult[] = [];
  let unreachable: string | undefined;
  for (const step of CHECK_STEPS) {
    if (unreachable !== undefined) {
      results.push({ id: step.id, status: 'not_run', expected: step.expected, got: `not run: an earlier step got ${unreachable}`, at: deps.now() });
      continue;
    }
    const id = ids[step.message];
    const { agent, refusal } = deps.guard.route(url, endpoint.source !== 'runtime');
    const result = await send({
      url,
      id,
      body: JSON.stringify(messages[step.message]),
      secret: step.signing === 'wrong' ? wrongSecret(id) : endpoint.secret,
      sentAt: step.signing === 'stale' ? new Date(Date.now() - STALE_MS) : undefined,
      timeoutMs: deps.timeoutMs,
      shutdown: deps.shutdown,
      dispatcher: agent,
      refusal,
    });
    if (result.status_code === null) unreachable = answered(result);
    results.push({ id: step.id, status: passes(step.expected, result.status_code) ? 'passed' : 'failed', expected: step.expected, got: answered(result), at: deps.now() });
  }
  return results;
}
