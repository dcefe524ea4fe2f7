import type { Response } from 'express';
import { toApiError } from './errors.js';
import type { BodyReply, Reply, ReplySink, StreamReply } from './handler.js';
import { noteFailure } from './response-notes.js';

const bodyBytes = (reply: BodyReply): Buffer => {
  const text = reply.serialized ?? (reply.body === undefined ? '' : JSON.stringify(reply.body));
  return Buffer.isBuffer(text) ? text : Buffer.from(text);
};

/** Writes a reply's status line and headers, with its length, for replies that write their body in parts. */
function writeHead(res: Response, reply: BodyReply, bytes: Buffer): void {
  res.status(reply.status);
  if (reply.headers) res.set(reply.headers);
  if (bytes.length > 0) res.type(reply.type ?? 'application/json');
  res.setHeader('Content-Length', bytes.length);
  res.flushHeaders();
}

function sendBody(res: Response, reply: BodyReply): void {
  if (reply.headers) res.set(reply.headers);
  if (reply.serialized !== undefined) res.status(reply.status).type(reply.type ?? 'application/json').send(reply.serialized);
  else if (reply.body === undefined) res.status(reply.status).end();
  else res.status(reply.status).json(reply.body);
}

function sendStream(res: Response, reply: StreamReply): void {
  res.status(reply.status).set(reply.headers);
  res.flushHeaders();
  const sink: ReplySink = {
    write: (chunk) => !res.writableEnded && res.write(chunk),
    onDrain: (listener) => void res.once('drain', listener),
    end: (chunk) => void (res.writableEnded || res.end(chunk)),
    abort: () => void res.destroy(),
    get closed() {
      return res.writableEnded || res.destroyed;
    },
    onClose: (listener) => void res.once('close', listener),
  };
  reply.stream(sink);
}

/** How a dribble is paced: `chunkBytes` at a time, one chunk every `intervalMs`. */
type Pace = { chunkBytes: number; intervalMs: number };

/**
 * Sends the bytes pushed to it at `pace`, then ends the answer once `end` was called and
 * all is out. `push` answers whether nothing waits, here or (once hurried) in the
 * connection's buffer: a stream that minds it waits for `onDrain`. Once `hurry` aborts
 * (the sandbox is stopping), what waits and what comes after goes at once: the body is
 * ready, and at a few bytes a second it would hold the stop until its grace ran out.
 */
function chunkPump(res: Response, { chunkBytes, intervalMs }: Pace, hurry: AbortSignal) {
  let waiting: Buffer = Buffer.alloc(0);
  let ending = false;
  let timer: NodeJS.Timeout | undefined;
  const drained: Array<() => void> = [];
  /** Set while what went at once (hurried) waits in the connection's buffer: a stream waits for it to drain. */
  let full = false;
  const open = (): boolean => !res.destroyed && !res.writableEnded;
  const emptied = (): void => {
    if (!open()) return;
    if (ending) res.end();
    else for (const listener of drained.splice(0)) listener();
  };
  const tick = (): void => {
    timer = undefined;
    if (!open()) return;
    res.write(waiting.subarray(0, chunkBytes));
    waiting = waiting.subarray(chunkBytes);
    if (waiting.length > 0) timer = setTimeout(tick, intervalMs);
    else emptied();
  };
  const hurried = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (!open()) return;
    if (waiting.length > 0 && !res.write(waiting) && !full) {
      full = true;
      res.once('drain', () => {
        full = false;
        emptied();
      });
    }
    waiting = Buffer.alloc(0);
    if (!full) emptied();
  };
  hurry.addEventListener('abort', hurried, { once: true });
  res.once('close', () => {
    clearTimeout(timer);
    hurry.removeEventListener('abort', hurried);
  });
  return {
    get ending(): boolean {
      return ending;
    },
    push(bytes: Buffer): boolean {
      if (bytes.length > 0) waiting = waiting.length === 0 ? bytes : Buffer.concat([waiting, bytes]);
      if (hurry.aborted) hurried();
      else if (timer === undefined && waiting.length > 0) timer = setTimeout(tick, intervalMs);
      return waiting.length === 0 && !full;
    },
    onDrain: (listener: () => void): void => void drained.push(listener),
    end(): void {
      ending = true;
      if (timer === undefined && waiting.length === 0 && open()) res.end();
    },
  };
}

/** A body sent slowly: its length told first, as any answer's. */
function dribble(res: Response, reply: BodyReply, pace: Pace, hurry: AbortSignal): void {
  const bytes = bodyBytes(reply);
  writeHead(res, reply, bytes);
  const pump = chunkPump(res, pace, hurry);
  pump.push(bytes);
  pump.end();
}

/** A stream sent slowly: whatever its parts, the bytes go at the pace. */
function dribbleStream(res: Response, reply: StreamReply, pace: Pace, hurry: AbortSignal): void {
  const pump = chunkPump(res, pace, hurry);
  sendStream(res, {
    ...reply,
    stream: (sink) =>
      reply.stream({
        write: (part) => !sink.closed && !pump.ending && pump.push(Buffer.from(part)),
        onDrain: pump.onDrain,
        end: (part) => {
          if (sink.closed || pump.ending) return;
          if (part) pump.push(Buffer.from(part));
          pump.end();
        },
        abort: () => sink.abort(),
        get closed() {
          return sink.closed;
        },
        onClose: (listener) => sink.onClose(listener),
      }),
  });
}

async function cutAfter(res: Response, afterMs: number, pending: Promise<Reply>): Promise<void> {
  const timer = setTimeout(() => res.req.socket.resetAndDestroy(), afterMs);
  res.once('close', () => clearTimeout(timer));
  const reply = await pending;
  if (res.headersSent || res.destroyed) return;
  if ('status' in reply && !('stream' in reply)) {
    const bytes = bodyBytes(reply);
    writeHead(res, reply, bytes);
    res.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
    return;
  }
  await sendReply(res, reply);
}

/** Never answers; drops the connection when `until` aborts (the sandbox is stopping). */
function hold(res: Response, until: AbortSignal): Promise<void> {
  const drop = (): void => void res.socket?.destroy();
  if (until.aborted) return Promise.resolve(drop());
  until.addEventListener('abort', drop, { once: true });
  return new Promise((resolve) =>
    res.once('close', () => {
      until.removeEventListener('abort', drop);
      resolve();
    }),
  );
}

/**
 * Calls `released` once the connection closes, or at once when it has closed already (the
 * client gave up while the handler ran): a held slot must never outlive its connection.
 */
function onClosed(res: Response, released: (() => void) | undefined): boolean {
  if (released === undefined) return false;
  if (res.destroyed || res.closed) {
    released();
    return true;
  }
  res.once('close', released);
  return false;
}

/** Writes a handler's reply: the one place that writes answers to the connection. */
export async function sendReply(res: Response, reply: Reply): Promise<void> {
  if ('reset' in reply) return void res.req.socket.resetAndDestroy();
  if ('cutAfterMs' in reply) {
    if (onClosed(res, reply.released)) return;
    return cutAfter(res, reply.cutAfterMs, reply.reply);
  }
  if ('hold' in reply) {
    if (onClosed(res, reply.released)) return;
    return hold(res, reply.hold);
  }
  if ('dribble' in reply) {
    if (onClosed(res, reply.released)) return;
    return 'stream' in reply.reply ? dribbleStream(res, reply.reply, reply.dribble, reply.hurry) : dribble(res, reply.reply, reply.dribble, reply.hurry);
  }
  if ('stream' in reply) return sendStream(res, reply);
  sendBody(res, reply);
}

/** The one place an error becomes an HTTP answer: the envelope, never HTML or a stack. */
export function sendError(res: Response, error: unknown): void {
  const apiError = toApiError(error, res.req?.method);
  if (apiError.status === 500) noteFailure(res, error);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  try {
    res.set(apiError.headers).status(apiError.status).json(apiError.toEnvelope());
  } catch (failed) {
    // Headers an answer set before it failed (a stored fault rule's, say) can fail this one
    // too: the connection is dropped rather than the failure left to end the process.
    noteFailure(res, failed);
    res.destroy();
  }
}
