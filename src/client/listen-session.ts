import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { readableFailure } from '../shared/index.js';
import { callerHeaders, isWrongVersion, notASandbox } from './exchange.js';
import { envelopeOf, refusal } from './refusal.js';
import { noteSecret } from './listen-secret.js';
import { ForwardQueue, forward, isAttempt, notForwarded, type ListenAttempt, type ListenResult } from './forward.js';
import { apiPrefixHint, sandboxUrl } from './url.js';

/** What a listener connects with (flags already checked, see listen.ts). */
export interface ListenSettings {
  /** The sandbox's base URL, http(s). */
  url: string;
  token: string;
  /** The local receiver, an absolute http(s) URL. */
  forwardTo: string;
  name: string;
  /** The endpoint's event filter; absent: the server keeps (or, for a new listener, sets) every event. */
  events?: string[];
  /** The client an admin token acts for. */
  client?: string;
}

export interface ListenIo {
  out(text: string): void;
  err(text: string): void;
}

/** The knobs a test turns; the defaults are what the CLI runs with. */
export interface ListenTuning {
  /** Forwards under way at once; the rest wait in arrival order. */
  concurrency: number;
  /** The wait before reconnect try n (1, 2, …). */
  backoffMs(n: number): number;
  /** A connection that hears nothing (no ping, no message) this long is dead: the sandbox pings every 15 s. */
  silenceMs: number;
}

/** 1, 2, 4, … 30 s, plus up to a quarter more at random, so that listeners cut off together do not all come back at the same moment. */
export const backoffMs = (n: number): number => {
  const base = Math.min(30_000, 1000 * 2 ** Math.min(n - 1, 5));
  return Math.round(base * (1 + Math.random() / 4));
};

export const DEFAULT_TUNING: ListenTuning = { concurrency: 16, backoffMs, silenceMs: 45_000 };

/** Close codes the sandbox ends a listener with for good: it was replaced by a newer connection under its name (4001), its endpoint was removed (4002) or disabled (4003). */
const FINAL_CLOSE_CODES = new Set([4001, 4002, 4003]);
/** Refusals of an opening that pass: too many requests (--rate-limit) and a timeout; tried again with the backoff. */
const PASSING_REFUSALS = new Set([408, 429]);

/** The largest message taken from the sandbox: an attempt carries one webhook body. */
const MAX_PAYLOAD = 16 * 1024 * 1024;

/**
 * The WebSocket URL of the listen endpoint for a base URL: http→ws, https→wss, the name and
 * filter in the query (the token never), and the process's session id, with `resume=1`
 * once it had been ready (a reconnect gives way to a newer listen that took the name).
 */
export function listenUrl(base: string, name: string, events?: string[], session?: { id: string; resume: boolean }): string {
  const url = sandboxUrl(base, '/__sandbox/listen');
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('name', name);
  if (events !== undefined) url.searchParams.set('events', events.join(','));
  if (session) url.searchParams.set('session', session.id);
  if (session?.resume) url.searchParams.set('resume', '1');
  // URLSearchParams writes ',' and '@' escaped; both are plain in a query, and the name reads better in logs as given.
  return url.toString().replaceAll('%2C', ',').replaceAll('%40', '@');
}

/** One line per forward: when, the event, the order, and what the local receiver made of it. */
export function forwardLine(attempt: ListenAttempt, result: ListenResult, now = new Date()): string {
  const outcome = result.status_code === null ? (result.error ?? 'no answer') : String(result.status_code);
  const copy = attempt.check ? ` (check ${attempt.check})` : attempt.chaos === 'bad_signature' ? ' (forged signature)' : attempt.chaos === 'duplicate' ? ' (duplicate)' : '';
  return `${now.toISOString()}  ${attempt.event}${copy}  ${attempt.order_no ?? '-'}  → ${outcome}  ${result.duration_ms} ms\n`;
}

/** How one connection ended: for good (the exit code), or to be tried again (why, and whether it had become ready). */
type Ended = { exit: number } | { retry: string; wasReady: boolean };

async function readBody(res: IncomingMessage, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) break;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}

/** Opens one connection and serves it until it ends. */
function connectOnce(settings: ListenSettings, io: ListenIo, stop: AbortSignal, tuning: ListenTuning, session: { id: string; resume: boolean; secret?: string }): Promise<Ended> {
  return new Promise((resolve) => {
    const headers = callerHeaders(settings.token, settings.client);
    const ws = new WebSocket(listenUrl(settings.url, settings.name, settings.events, session), { headers, maxPayload: MAX_PAYLOAD, handshakeTimeout: 15_000, followRedirects: false });
    const queue = new ForwardQueue(tuning.concurrency);
    let ended = false;
    let wasReady = false;
    let opened = false;
    let lastError: string | undefined;
    let plainHttp = false;
    let silence: NodeJS.Timeout | undefined;
    const heard = () => {
      clearTimeout(silence);
      silence = setTimeout(() => {
        lastError = `nothing heard from the sandbox for ${Math.round(tuning.silenceMs / 1000)} s`;
        ws.terminate();
      }, tuning.silenceMs);
    };
    const end = (how: Ended) => {
      if (ended) return;
      ended = true;
      clearTimeout(silence);
      stop.removeEventListener('abort', onStop);
      // Attempts not yet started came on this connection: the sandbox has recorded them failed and will retry them.
      queue.clear();
      resolve(how);
    };
    const onStop = () => {
      if (ws.readyState === WebSocket.OPEN) {
        // Forwards under way finish and are answered first (each within its attempt's time):
        // cut off, the receiver would have the webhook and the sandbox a failure, and send it again.
        if (queue.size > 0) io.err(`shipping-sandbox listen: stopping once the ${queue.size} forward(s) under way are answered (Ctrl-C again to quit now)\n`);
        void queue.idle().then(() => {
          ws.close(1000, 'listener stopped');
          // A sandbox that does not answer the close in time is not waited for.
          setTimeout(() => ws.terminate(), 2000).unref();
        });
      } else {
        ws.terminate();
        end({ exit: 0 });
      }
    };
    stop.addEventListener('abort', onStop);

    ws.on('unexpected-response', (req, res) => {
      const status = res.statusCode ?? 0;
      void readBody(res)
        .catch(() => '')
        .then((text) => {
          req.destroy();
          // Before the first session, an answer below 500 with a body no sandbox gives (a gateway's page, another service
          // at --url) is not the sandbox at all: said once, exit 2, as the other commands do, not tried again for ever.
          if (!wasReady && !session.resume && status < 500 && !PASSING_REFUSALS.has(status) && envelopeOf(text) === undefined) {
            io.err(`shipping-sandbox listen: ${notASandbox(settings.url, status, text.trim() ? `"${text.trim().slice(0, 100)}"` : 'an empty body')}${apiPrefixHint(settings.url, status)}\n`);
            end({ exit: 2 });
          } else if (status >= 400 && status < 500 && !PASSING_REFUSALS.has(status)) {
            // A 4xx is the sandbox's answer (bad token, read_only, a bad name or filter, too many listeners, a newer listen
            // holds the name): trying again changes nothing; but a 429 (--rate-limit) or 408 passes.
            io.err(`shipping-sandbox listen: ${refusal(status, text)}${apiPrefixHint(settings.url, status)}\n`);
            end({ exit: 1 });
          } else end({ retry: refusal(status, text, false), wasReady });
        });
    });
    ws.on('open', () => {
      opened = true;
      heard();
    });
    ws.on('error', (error) => {
      lastError = readableFailure(error.message, 'sandbox');
      plainHttp ||= isWrongVersion(error);
    });
    const trips = new QuickestTrip();
    const lateBy = (sentAt: unknown): number => (typeof sentAt === 'number' ? trips.lateBy(sentAt, Date.now()) : 0);
    ws.on('ping', (data) => {
      heard();
      // A sandbox older than the stamped ping sends none.
      if (data.length > 0) lateBy(Number(data.toString()));
    });
    ws.on('message', (data, isBinary) => {
      heard();
      if (isBinary) return;
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(data.toString()) as Record<string, unknown>;
      } catch {
        return;
      }
      if (message === null || typeof message !== 'object') return;
      if (message.type === 'ready') {
        wasReady = true;
        lateBy(message.now);
        // The filter a listener keeps from its last --events is said, so that a reused name's narrower filter is not a surprise.
        const events = Array.isArray(message.events) ? message.events.join(',') : 'all';
        io.out(`Ready: listener "${String(message.listener)}" (endpoint ${String(message.endpoint_id)}) forwarding to ${settings.forwardTo}. Signing secret: ${String(message.secret)} (${heldNote(Number(message.held ?? 0))}; events: ${events})\n`);
        // A sandbox that lost its data (a restart of `--data :memory:`, a reset) gives the listener a new endpoint and secret: a receiver set up with the old one refuses every delivery.
        noteSecret(session, String(message.secret), io.err, false);
      } else if (message.type === 'attempt') {
        if (!isAttempt(message)) {
          // Exactly one answer per attempt id, so that the sandbox need not wait out its timeout.
          if (typeof message.id === 'string') send({ type: 'result', id: message.id, status_code: null, duration_ms: 0, error: 'the listener could not read this attempt (upgrade shipping-sandbox?)', response_body: '', retry_after: null });
          return;
        }
        const attempt = message;
        if (typeof attempt.secret === 'string') noteSecret(session, attempt.secret, io.err, true);
        // The sandbox waits for the answer timeout_ms (and a little more) from when it sent the
        // attempt, not from when a forward starts: an attempt queued behind others gets only
        // the time left of it, and one whose time ran out while queued is answered at once, not
        // forwarded (a late answer would be recorded failed and the delivery sent again).
        const arrived = performance.now();
        const late = lateBy(attempt.sent_at);
        // Once stopping, nothing new goes to the receiver: answered at once, the sandbox retries it later.
        if (stop.aborted) return send(notForwarded(attempt, 0, 'the listener is stopping'));
        queue.push(async () => {
          if (ended) return;
          if (stop.aborted) return send(notForwarded(attempt, Math.floor(performance.now() - arrived), 'the listener is stopping'));
          const queued = Math.floor(performance.now() - arrived);
          const waited = queued + late;
          const left = attempt.timeout_ms - waited;
          const why = late >= 1_000 ? `read ${late} ms after the sandbox sent it (was this process paused, or its machine asleep?), then ${queued} ms in the listener's queue` : undefined;
          const result = left > 0 ? await forward(attempt, settings.forwardTo, left, waited) : notForwarded(attempt, waited, why);
          io.out(forwardLine(attempt, result));
          send(result);
        });
      }
      // Other types: a newer sandbox's, ignored.
    });
    const send = (result: ListenResult) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(result));
    };
    ws.on('close', (code, reason) => {
      const why = reason.toString();
      if (stop.aborted) end({ exit: 0 });
      else if (plainHttp && !opened && !session.resume) {
        // Never connected in this run: the URL is wrong, and trying it again changes nothing.
        io.err(`shipping-sandbox listen: could not connect (${lastError}): the sandbox at --url speaks plain http; use --url ${settings.url.replace(/^https:/i, 'http:')}\n`);
        end({ exit: 2 });
      } else if (FINAL_CLOSE_CODES.has(code)) {
        io.err(`shipping-sandbox listen: the sandbox closed the connection (${code}): ${why}\n`);
        end({ exit: 1 });
      } else end({ retry: code === 1006 ? `${opened ? 'connection lost' : 'could not connect'}${lastError ? ` (${lastError})` : ''}` : `the sandbox closed the connection (${code}${why ? `: ${why}` : ''})`, wasReady });
    });
  });
}

/** How long a message's (arrival − sending time) stays in the quickest trip: a step of either wall clock is forgotten after it. */
const TRIP_WINDOW_MS = 60_000;

/**
 * How late a message of the sandbox was read. The least (arrival − the sandbox's sending
 * time) over the messages read in the last TRIP_WINDOW_MS (attempts, and pings every 15 s)
 * is the clocks' difference plus the quickest trip; a message read later than that (this
 * process paused, its machine asleep) has spent the extra of its timeout already, as the
 * sandbox counts it. Over a window, not for good: after a step of either wall clock (an NTP
 * correction, a VM's resync) the pings bring the difference up to date within a minute.
 */
export class QuickestTrip {
  /** Candidates for the least trip, first read first, their trips rising (a sliding window's minimum over this process's reading times). */
  private readonly kept: Array<{ readAt: number; trip: number }> = [];

  lateBy(sentAt: number, now: number): number {
    if (!Number.isFinite(sentAt)) return 0;
    const trip = now - sentAt;
    while (this.kept.length > 0 && this.kept.at(-1)!.trip >= trip) this.kept.pop();
    this.kept.push({ readAt: now, trip });
    while (this.kept.length > 1 && this.kept[0]!.readAt < now - TRIP_WINDOW_MS) this.kept.shift();
    return Math.round(trip - this.kept[0]!.trip);
  }
}

/** Waits `ms`, or less if stopped. */
function pause(ms: number, stop: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stop.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    stop.addEventListener('abort', done);
  });
}

/**
 * Listens until stopped (exit 0), told off for good (1: a refused opening, replaced by a
 * newer connection under the name, the endpoint removed), or shown before it ever connected
 * that --url is no sandbox (2: a page no sandbox gives, an https:// URL to a plain-http
 * sandbox), reconnecting with backoff after any other end (a drop, the sandbox restarting
 * with 1001, a proxy's 502). Returns the exit code.
 */
export async function listen(settings: ListenSettings, io: ListenIo, stop: AbortSignal, tuning: ListenTuning = DEFAULT_TUNING): Promise<number> {
  let tries = 0;
  const session: { id: string; resume: boolean; secret?: string } = { id: randomUUID(), resume: false };
  while (!stop.aborted) {
    const ended = await connectOnce(settings, io, stop, tuning, session);
    if ('exit' in ended) return ended.exit;
    if (stop.aborted) break;
    if (ended.wasReady) session.resume = true;
    tries = ended.wasReady ? 1 : tries + 1;
    const wait = tuning.backoffMs(tries);
    io.err(`shipping-sandbox listen: ${ended.retry}; reconnecting in ${(wait / 1000).toFixed(1)} s (try ${tries})\n`);
    await pause(wait, stop);
  }
  return 0;
}

/** The ready line's count of held deliveries: `1 held delivery coming`, `3 held deliveries coming`. */
export const heldNote = (held: number): string => `${held} held ${held === 1 ? 'delivery' : 'deliveries'} coming`;
