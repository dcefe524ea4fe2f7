import { fetchFailure } from '../shared/index.js';

/** One attempt as the sandbox hands it to a listener (the listen protocol: docs/decisions/0009-listen.md). */
export interface ListenAttempt {
  type: 'attempt';
  /** Unique within the connection; the result names it. */
  id: string;
  delivery_id: string;
  event: string;
  order_no: string | null;
  timeout_ms: number;
  /** When the sandbox sent it, its wall clock in ms (a sandbox older than this field leaves it out). */
  sent_at?: number;
  /** The headers a direct delivery sends, signature included. */
  headers: Record<string, string>;
  /** The exact JSON text a direct delivery POSTs. */
  body: string;
  /** A copy the delivery's chaos asked for: the same message again (`duplicate`), or with a forged signature (`bad_signature`). */
  chaos?: string;
  /** A step of the webhook checks (`POST /__sandbox/checks`), e.g. `bad_signature`: a message of no delivery. */
  check?: string;
  /** The endpoint's signing secret as the attempt was made (a sandbox older than this field leaves it out). */
  secret?: string;
}

/** What the local receiver answered, sent back to the sandbox as the attempt's outcome. */
export interface ListenResult {
  type: 'result';
  id: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string;
  retry_after: string | null;
}

/** How much of the local answer's body goes back (the delivery log keeps as much of a direct attempt's). */
export const EXCERPT_BYTES = 1024;
/** Error texts and a Retry-After are cut to this many characters: a result stays far below the sandbox's 64 KiB frame limit. */
const TEXT_LIMIT = 512;

/** Whether a parsed message is an attempt this listener can forward (a malformed one is answered as failed, see listen-session.ts). */
export function isAttempt(message: Record<string, unknown>): message is Record<string, unknown> & ListenAttempt {
  const { id, body, headers, timeout_ms } = message;
  return (
    typeof id === 'string' &&
    typeof body === 'string' &&
    typeof timeout_ms === 'number' &&
    timeout_ms > 0 &&
    typeof headers === 'object' &&
    headers !== null &&
    Object.values(headers).every((v) => typeof v === 'string')
  );
}

/**
 * The first `bytes` bytes of a body as text, never cutting a character in two. The status
 * came within the timeout, so a body still arriving when it ends keeps what came: the
 * answer counts, as it does for a direct attempt.
 */
async function excerpt(response: Response, bytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < bytes) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.length;
    }
  } catch {
    // cut off or timed out while reading: keep what came
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return utf8Prefix(Buffer.concat(chunks), bytes);
}

/** At most `bytes` bytes of UTF-8 as text, ending before a character the cut would split. */
export function utf8Prefix(buffer: Buffer, bytes: number): string {
  if (buffer.length <= bytes) return buffer.toString('utf8');
  let end = bytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the character that is cut.
  while (end > 0 && (buffer[end]! & 0xc0) === 0x80) end -= 1;
  return buffer.subarray(0, end).toString('utf8');
}

/** The shortest wait in the listener's queue that a timed-out forward names: a millisecond or two between reading and forwarding is no queue. */
const QUEUE_NOTE_MS = 100;

/** A failed forward as one line: the system error's code first (ECONNREFUSED: …), as a direct attempt's log shows it. */
function describe(error: unknown, timeoutMs: number, timedOut: boolean, waitedMs: number): string {
  if (timedOut) return waitedMs >= QUEUE_NOTE_MS ? `timed out after ${timeoutMs} ms (the rest of its timeout after ${waitedMs} ms in the listener's queue)` : `timed out after ${timeoutMs + waitedMs} ms`;
  return fetchFailure(error);
}

/** The answer to an attempt whose time ran out while it waited in the listener's queue: not forwarded. */
export function notForwarded(attempt: ListenAttempt, waitedMs: number, why = `waited ${waitedMs} ms in the listener's queue`): ListenResult {
  return { type: 'result', id: attempt.id, status_code: null, duration_ms: 0, error: `not forwarded: ${why}`, response_body: '', retry_after: null };
}

/**
 * POSTs an attempt's body to the local receiver with exactly its headers, redirects not
 * followed, within `timeoutMs` (a timer of this process: the attempt's timeout less the
 * `waitedMs` it spent queued here, see listen-session.ts), and says what came back.
 * Never throws: a receiver that is down or silent is a result with no status.
 */
export async function forward(attempt: ListenAttempt, to: string, timeoutMs = attempt.timeout_ms, waitedMs = 0): Promise<ListenResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  const result = { type: 'result' as const, id: attempt.id };
  try {
    const response = await fetch(to, { method: 'POST', redirect: 'manual', headers: attempt.headers, body: attempt.body, signal: timeout.signal });
    const body = await excerpt(response, EXCERPT_BYTES);
    const retryAfter = response.headers.get('retry-after');
    return { ...result, status_code: response.status, duration_ms: elapsed(), error: null, response_body: body, retry_after: retryAfter === null ? null : retryAfter.slice(0, TEXT_LIMIT) };
  } catch (error) {
    return { ...result, status_code: null, duration_ms: elapsed(), error: describe(error, timeoutMs, timeout.signal.aborted, waitedMs).slice(0, TEXT_LIMIT), response_body: '', retry_after: null };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs at most `limit` forwards at once and queues the rest in arrival order, so a burst
 * of attempts does not open a connection each to the local receiver at the same moment.
 * `clear()` drops what has not started (the connection it came on is gone: the sandbox has
 * already recorded those attempts as failed and will retry them).
 */
export class ForwardQueue {
  private running = 0;
  private readonly waiting: Array<() => Promise<void>> = [];

  constructor(private readonly limit: number) {}

  push(work: () => Promise<void>): void {
    this.waiting.push(work);
    this.next();
  }

  clear(): void {
    this.waiting.length = 0;
  }

  /** Forwards under way or queued. */
  get size(): number {
    return this.running + this.waiting.length;
  }

  /** Resolves once nothing is under way or queued. */
  async idle(): Promise<void> {
    while (this.size > 0) await new Promise<void>((resolve) => this.idlers.push(resolve));
  }

  private readonly idlers: Array<() => void> = [];

  private next(): void {
    while (this.running < this.limit && this.waiting.length > 0) {
      const work = this.waiting.shift()!;
      this.running += 1;
      void work().finally(() => {
        this.running -= 1;
        this.next();
        if (this.size === 0) for (const idle of this.idlers.splice(0)) idle();
      });
    }
  }
}
