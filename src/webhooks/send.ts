import { Webhook } from 'standardwebhooks';
import type { Dispatcher, Response } from 'undici';
import { undici } from './undici.js';
import { TargetRefused } from './target-guard.js';
import type { Refusal } from './targets.js';
import { fetchFailure } from '../shared/index.js';

export const USER_AGENT = 'shipping-sandbox-webhooks/1';
/** How much of a response body the delivery log keeps. */
export const EXCERPT_BYTES = 1024;

/** One signed POST to make. */
export interface SendRequest {
  url: string;
  id: string;
  body: string;
  secret: string;
  timeoutMs: number;
  /** Aborted on shutdown: the attempt is then not recorded at all. */
  shutdown: AbortSignal;
  /** The undici dispatcher to connect through (the target policy's checking Agent, see target-guard.ts). */
  dispatcher: Dispatcher;
  /** Set when the policy already refused the URL's address literal: nothing is sent. */
  refusal?: Refusal;
  /** The time to sign and stamp (default now); the readiness checks send a stale one. */
  sentAt?: Date;
}

/** What came of one POST. */
export interface SendResult {
  webhook_timestamp: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string;
  retry_after: string | null;
}

/** Thrown when the shutdown signal stopped the attempt: it must not be recorded. */
export class AttemptAborted extends Error {
  override name = 'AttemptAborted';
}

/**
 * The first EXCERPT_BYTES of a response body. The status came within the timeout, so a
 * body still arriving when it ends (or cut off) keeps what came: the answer counts, so a
 * receiver that acknowledges with a slow body is not logged "no answer" and sent the
 * message again. Only a shutdown ends it with nothing.
 */
async function excerpt(response: Response, shutdown: AbortSignal): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < EXCERPT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch (error) {
    if (shutdown.aborted) throw error;
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return asJsonWithin(Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8'), EXCERPT_BYTES);
}

/**
 * A text cut to what JSON writes in at most `bytes` bytes, control characters (but tab and
 * line breaks) as U+FFFD. The excerpt is listed with each attempt: JSON writes a control
 * character as a 6-byte escape, so without this bound a receiver answering control
 * characters would make every attempt, and every listing of deliveries, six times larger.
 */
export function asJsonWithin(text: string, bytes: number): string {
  let used = 0;
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    const kept = code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d ? '\uFFFD' : code === 0x7f ? '\uFFFD' : char;
    const cost = kept === '"' || kept === '\\' || code === 0x09 || code === 0x0a || code === 0x0d ? 2 : Buffer.byteLength(kept);
    if (used + cost > bytes) break;
    used += cost;
    out += kept;
  }
  return out;
}

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof DOMException && error.name === 'TimeoutError') return `timed out after ${timeoutMs} ms`;
  return fetchFailure(error);
}

/** The outcome of an attempt the target policy refused: it never connected, so no duration and no body. */
const refused = (timestamp: number, error: TargetRefused): SendResult => ({ webhook_timestamp: timestamp, status_code: null, duration_ms: 0, error: error.message, response_body: '', retry_after: null });

/**
 * POSTs a body signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`). The timestamp is real time, not sandbox time, so receivers'
 * tolerance checks pass under a manual clock. Never throws but `AttemptAborted`.
 */
export async function send(request: SendRequest): Promise<SendResult> {
  const sentAt = request.sentAt ?? new Date();
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  // Refused before any connection: no timing, no answer, nothing that tells what listens there.
  if (request.refusal) return refused(timestamp, new TargetRefused(request.refusal));
  const signature = new Webhook(request.secret).sign(request.id, sentAt, request.body);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // A timer of our own, not AbortSignal.timeout: combined by AbortSignal.any, Node 20 may
  // collect that signal before it fires, and an attempt to a silent receiver then never ends
  // (nodejs/node issue 57736).
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(new DOMException(`timed out after ${request.timeoutMs} ms`, 'TimeoutError')), request.timeoutMs);
  try {
    const response = await undici().fetch(request.url, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': request.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      },
      body: request.body,
      signal: AbortSignal.any([timeout.signal, request.shutdown]),
      dispatcher: request.dispatcher,
    });
    const body = await excerpt(response, request.shutdown);
    return { webhook_timestamp: timestamp, status_code: response.status, duration_ms: elapsed(), error: null, response_body: body, retry_after: response.headers.get('retry-after') };
  } catch (error) {
    if (request.shutdown.aborted) throw new AttemptAborted('shut down during the attempt');
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof TargetRefused) return refused(timestamp, cause);
    return { webhook_timestamp: timestamp, status_code: null, duration_ms: elapsed(), error: describe(timeout.signal.aborted ? timeout.signal.reason : error, request.timeoutMs), response_body: '', retry_after: null };
  } finally {
    clearTimeout(timer);
  }
}
