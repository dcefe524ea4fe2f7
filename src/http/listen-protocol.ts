/** The listen protocol's server side: its bounds and timings, one listener's connection, its messages and the checks of a session's request (the handshake's checks and the bound on opens are in listen-handshake.ts). */
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import type { Client } from '../clients/index.js';
import { asJsonWithin, EXCERPT_BYTES, type Listeners, type RelayedAttempt, type RelayResult } from '../webhooks/index.js';
import type { IncomingMessage } from 'node:http';
import { asRead } from '../shared/index.js';
import { checkRawDepth } from './depth.js';
import { endConnection } from './client-error.js';
import { ApiError } from './errors.js';

/** Largest message a listener may send (ws maxPayload): a result carries at most 1 KiB of body. */
export const MAX_LISTEN_MESSAGE = 64 * 1024;
/** The server pings each listener this often; one that has not answered the last ping by the next is ended. */
export const LISTEN_PING_MS = 15_000;
/** While connected, a listener's held deliveries are made due again this often (a delivery held as it connected). */
export const LISTEN_RESUME_MS = 5_000;
/** While connected, a listener's `last_seen_at` is written this often (the expiry reads it). */
export const LISTEN_SEEN_MS = 5 * 60_000;
/** The channel replicas hand listener attempts over on (PostgreSQL). */
export const LISTEN_CHANNEL = 'sandbox_listen';
/** How long a replica waits for the one holding a listener to take an attempt; none: not connected (held). */
export const HANDOFF_TAKEN_MS = 1_000;
/**
 * How long after a hand-off was sent the holder may still take it: the rest of
 * HANDOFF_TAKEN_MS is left for its "taken" to reach the asking replica, which after
 * HANDOFF_TAKEN_MS holds the delivery (not connected). A holder that reads the request
 * later drops it, else the delivery would be both held there and forwarded here. The
 * deadline is wall-clock time: replicas' clocks must agree within that rest.
 */
export const HANDOFF_TAKE_WITHIN_MS = HANDOFF_TAKEN_MS / 2;
/** How long a listener has to answer the close of a stopping sandbox (1001), or take a 1008's close frame (nothing more of it is read), before it is dropped. */
export const CLOSE_GRACE_MS = 1_000;
export { HANDOFF_CUT } from '../webhooks/index.js';
/** How long a replica waits for another to say it holds a listener (the endpoint listing). */
export const WHO_MS = 300;

/**
 * How many messages a listener may send beyond one per attempt it was sent (room for a
 * later CLI's messages of other types): each message is parsed on the event loop every
 * partner shares, and a listener has nothing to say but its results.
 */
export const MESSAGES_BEYOND_ATTEMPTS = 16;
/**
 * Control frames (pings and pongs) a listener may send between two of the server's pings:
 * listen sends one pong per ping and no ping of its own. Past this the connection is
 * dropped: a flood of 6-byte frames costs the event loop every partner shares, and each
 * ping is answered. Below the WebSocket library's own cut (60 pings whose pongs are not
 * written yet, `maxPendingAutoPongs`), so that a burst of pings is logged too.
 */
export const CONTROL_FRAMES_PER_PING = 32;
/** Bytes waiting to go to a listener above which an attempt fails at once as congested (and is retried). */
export const LISTEN_CONGESTED_BYTES = 1024 * 1024;
/** How much longer than the webhook timeout the relay waits for a listener's answer. */
export const LISTEN_ANSWER_MARGIN_MS = 2_000;

/** The close codes of the listen protocol. */
export const CLOSE = {
  replaced: { code: 4001, reason: 'replaced by a newer connection under this name' },
  removed: { code: 4002, reason: 'listener endpoint removed' },
  // Not for good: `listen` connects again after its usual backoff (about a second), and its endpoint is made anew (a new secret).
  reset: { code: 4004, reason: 'the client was reset: connect again to make the listener endpoint anew' },
  // A close reason holds 123 bytes at most.
  disabled: { code: 4003, reason: 'listener endpoint disabled (a 410 Gone, or the API): fix the receiver, then start listen again' },
  stopping: { code: 1001, reason: 'the sandbox is stopping' },
  malformed: { code: 1008, reason: 'malformed message' },
  chatty: { code: 1008, reason: 'more messages than attempts sent to it' },
} as const;

interface Waiting {
  resolve: (result: RelayResult | undefined) => void;
  started: number;
}

/** One listener's connection held by this process. */
export class Connection {
  readonly waiting = new Map<string, Waiting>();
  alive = true;
  private next = 0;
  readonly timers: NodeJS.Timeout[] = [];

  constructor(
    readonly ws: WebSocket,
    readonly client: Client,
    readonly name: string,
    readonly endpointId: string,
    /** The listen process's own id (`session` in the request), when it sent one: its reconnects carry the same. */
    readonly session?: string,
  ) {}

  /** A malformed message came, or one too many: the connection is closing with 1008. */
  private malformed = false;
  /** Messages the listener sent. */
  private heard = 0;
  /** Control frames the listener sent since the server's last ping. */
  private controls = 0;

  /** The server pings: the listener has until the next ping to answer, and its control frames count afresh. */
  pinged(): void {
    this.alive = false;
    this.controls = 0;
  }

  /** The listener answered the server's last ping: a control frame, and alive. */
  ponged(): boolean {
    this.alive = true;
    return this.controlFrame();
  }

  /** A ping or pong of the listener: past CONTROL_FRAMES_PER_PING since the server's last ping the connection is dropped; true the once it is. */
  controlFrame(): boolean {
    if (++this.controls !== CONTROL_FRAMES_PER_PING + 1) return false;
    this.ws.terminate();
    return true;
  }

  attemptId(): string {
    return `att_${++this.next}`;
  }

  /**
   * A message of the listener: a result settles its attempt. A message that is malformed,
   * or more than MESSAGES_BEYOND_ATTEMPTS beyond the attempts sent, closes the connection
   * with 1008 and ended CLOSE_GRACE_MS later; what else arrived before the close is not
   * parsed, and nothing after it is read (each such frame could cost the event loop).
   */
  received(data: RawData, isBinary: boolean): void {
    if (this.malformed) return;
    this.heard += 1;
    const chatty = this.heard > this.next + MESSAGES_BEYOND_ATTEMPTS;
    const result = chatty || isBinary ? undefined : resultOf(data);
    if (!result) {
      this.malformed = true;
      const close = chatty ? CLOSE.chatty : CLOSE.malformed;
      this.ws.close(close.code, close.reason);
      // Nothing more of it is read: a peer that goes on sending would otherwise be read until ws's 30 s close timeout.
      this.ws.pause();
      this.timers.push(setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref());
      return;
    }
    if (result === 'ignored') return;
    const w = this.waiting.get(result.id);
    if (!w) return;
    this.waiting.delete(result.id);
    const { id: _id, ...outcome } = result;
    w.resolve({ ...outcome, duration_ms: outcome.duration_ms ?? Math.round(performance.now() - w.started) });
  }

  /** Every attempt still out ends with this outcome (the connection went). */
  endAll(error: string): void {
    for (const [id, w] of this.waiting) {
      this.waiting.delete(id);
      w.resolve({ status_code: null, duration_ms: Math.round(performance.now() - w.started), error, response_body: '', retry_after: null });
    }
  }

  /** One attempt over this connection: its result, undefined when `shutdown` aborted it. */
  send(attempt: RelayedAttempt, shutdown: AbortSignal): Promise<RelayResult | undefined> | RelayResult | undefined {
    if (shutdown.aborted) return undefined;
    if (this.ws.bufferedAmount > LISTEN_CONGESTED_BYTES) {
      return { status_code: null, duration_ms: 0, error: `listener congested: more than ${LISTEN_CONGESTED_BYTES} bytes waiting to be sent to it`, response_body: '', retry_after: null };
    }
    const id = this.attemptId();
    const started = performance.now();
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (result: RelayResult | undefined) => {
        clearTimeout(timer);
        shutdown.removeEventListener('abort', aborted);
        this.waiting.delete(id);
        resolve(result);
      };
      const aborted = () => done(undefined);
      shutdown.addEventListener('abort', aborted, { once: true });
      timer = setTimeout(
        () => done({ status_code: null, duration_ms: Math.round(performance.now() - started), error: `timed out after ${attempt.timeout_ms} ms`, response_body: '', retry_after: null }),
        attempt.timeout_ms + LISTEN_ANSWER_MARGIN_MS,
      );
      this.waiting.set(id, { resolve: done, started });
      const { delivery_id, event, order_no, timeout_ms, headers, body, chaos, check, secret } = attempt;
      // sent_at: the listener tells from it an attempt it read late (its process paused, its machine asleep) and gives the receiver only what is left.
      const message = { type: 'attempt', id, delivery_id, event, order_no, timeout_ms, sent_at: Date.now(), headers, body, ...(chaos ? { chaos } : {}), ...(check ? { check } : {}), ...(secret ? { secret } : {}) };
      this.ws.send(JSON.stringify(message), (err) => {
        if (err) done({ status_code: null, duration_ms: Math.round(performance.now() - started), error: 'listener disconnected', response_body: '', retry_after: null });
      });
    });
  }
}

export const keyOf = (clientId: string, name: string): string => `${clientId}\u0000${name}`;

type Result = { id: string } & Omit<RelayResult, 'duration_ms'> & { duration_ms: number | undefined };

/** The deepest nesting a listener's message may have: a result is one object of scalars (2 leaves room for a field the CLI may add). */
const MESSAGE_DEPTH = 2;
/** The most commas outside strings a listener's message may have: a result has seven fields (32 leaves room for more). */
const MESSAGE_COMMAS = 32;

/**
 * A listener's message: a checked `result`, 'ignored' for a well-formed message of
 * another type, or undefined when malformed (the connection is then closed with 1008).
 */
export function resultOf(data: RawData): Result | 'ignored' | undefined {
  let message: unknown;
  try {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
    // A result is one flat object of a few fields: a deeply nested or a wide message (64 KiB of `[`, or of keys) costs milliseconds to parse, and one partner's listener sending them would hold every partner's requests.
    checkRawDepth(bytes, MESSAGE_DEPTH, MESSAGE_COMMAS);
    message = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const m = message as Record<string, unknown>;
  if (m.type !== 'result') return typeof m.type === 'string' ? 'ignored' : undefined;
  const status = m.status_code;
  if (typeof m.id !== 'string') return undefined;
  if (status !== null && !(Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599)) return undefined;
  if (status === null && typeof m.error !== 'string') return undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    id: m.id,
    status_code: status as number | null,
    duration_ms: typeof m.duration_ms === 'number' && Number.isFinite(m.duration_ms) && m.duration_ms >= 0 ? Math.round(m.duration_ms) : undefined,
    error: status === null ? asJsonWithin(text(m.error)!, EXCERPT_BYTES) : null,
    response_body: asJsonWithin(text(m.response_body) ?? '', EXCERPT_BYTES),
    retry_after: text(m.retry_after)?.slice(0, 200) ?? null,
  };
}

/**
 * A session's look at its endpoint (every LISTEN_RESUME_MS, while `held` says it is still
 * the one held under its name): gone, it is closed with 4002 (deleted) or 4004 (its client
 * reset: listen connects again); disabled, with 4003 (no delivery would come to it, so it
 * is told rather than left deaf); else its held deliveries are made due.
 */
export async function checkEndpoint(listeners: Listeners, conn: Connection, held: () => boolean): Promise<void> {
  const { ws, client, endpointId } = conn;
  // A read that meets the store away says it could not read; the resume, a change, that nothing was saved.
  const reading = (error: unknown): never => {
    throw asRead(error);
  };
  const endpoint = await listeners.current(client.id, endpointId).catch(reading);
  if (!held()) return;
  if (!endpoint) {
    const gone = (await listeners.removedByReset(client.id, endpointId).catch(reading)) ? CLOSE.reset : CLOSE.removed;
    if (held()) ws.close(gone.code, gone.reason);
    return;
  }
  if (!endpoint.enabled) return ws.close(CLOSE.disabled.code, CLOSE.disabled.reason);
  await listeners.resume(client.id, endpointId);
}

/** Answers a refused upgrade as a plain HTTP response with the error envelope, and closes the socket. */
export function refuse(socket: Duplex, error: ApiError): void {
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify(error.toEnvelope());
  const headers = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close', ...error.headers };
  const reason = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 409: 'Conflict', 429: 'Too Many Requests', 503: 'Service Unavailable' }[error.status] ?? 'Error';
  endConnection(socket, `HTTP/1.1 ${error.status} ${reason}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body}`);
}

/** Where a listen session opens (a WebSocket upgrade of a GET). */
export const LISTEN_PATH = '/__sandbox/listen';

/** The request target as a URL, or the 400 for a target that is none (an absolute form such as `http://[::1/x`): never a throw, so never a crash of the process. */
export function targetOf(req: IncomingMessage): URL | ApiError {
  try {
    return new URL(req.url ?? '/', 'http://sandbox');
  } catch {
    return new ApiError(400, 'The request target is not a valid URL.', [{ field: 'url', message: 'must be a path such as /__sandbox/listen?name=laptop' }]);
  }
}

/** One replica's message to the others about listeners (see `handOff`); short keys keep it far below NOTIFY's 8000 bytes. */
export type Signal =
  // A check's message (k: its step) is no delivery's, none to read it from: its body (b) goes with it. ch: a chaos copy.
  | { t: 'req'; r: string; from: string; c: string; l: string; d: string; e: string; o: string | null; tm: number; h: Record<string, string>; by: number; k?: string; b?: string; ch?: RelayedAttempt['chaos'] }
  | { t: 'who'; r: string; from: string; c: string; l: string }
  | { t: 'taken'; r: string; to: string }
  | { t: 'here'; r: string; to: string }
  | { t: 'res'; r: string; to: string; x: RelayResult | null };

export interface Asked {
  taken(): void;
  result(result: RelayResult | null): void;
}

/** A listen process's session id as sent: up to 64 letters, digits, `-` and `_`; anything else is none. */
export const sessionOf = (value: string | null): string | undefined => (value !== null && /^[\w-]{1,64}$/.test(value) ? value : undefined);

/**
 * A listen process that reconnects (`resume`) while another process holds its name here
 * is the older of the two (the name went to the newer while this one was away): it gives
 * way with a 409, rather than take the name back from the newer.
 */
export function checkNotSuperseded(holder: Connection | undefined, name: string, session: string | undefined, resume: boolean): void {
  if (!resume || !holder || holder.session === session || holder.ws.readyState !== holder.ws.OPEN) return;
  throw new ApiError(409, `Another listen took the name "${name}" while this one was away, and keeps it: stop one of them, or give each its own --name.`, [{ field: 'name', message: 'is held by a newer listen' }]);
}
