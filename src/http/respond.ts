import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Response } from 'express';
import { toApiError } from './errors.js';
import type { BodyReply, Reply, ReplySink, StreamReply } from './handler.js';
import { noteFailure } from './response-notes.js';

const HOLD_WATCH_MS = 200;

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

/** Whether the server of this answer's connection stopped listening (the sandbox is stopping). */
const serverStopped = (res: Response): boolean => {
  const server = (res.socket as (Socket & { server?: Server | null }) | null)?.server;
  return server != null && !server.listening;
};

/**
 * Calls `hurry` once, when the sandbox is stopping while a slow answer (a dribble) is still
 * being sent: at a few bytes a second it would hold the stop until its grace ran out, and
 * its body is ready, so the rest goes at once.
 */
function whenStopping(res: Response, hurry: () => void): void {
  const watch = setInterval(() => {
    if (!serverStopped(res)) return;
    clearInterval(watch);
    if (!res.destroyed && !res.writableEnded) hurry();
  }, HOLD_WATCH_MS).unref();
  res.once('close', () => clearInterval(watch));
}

function dribble(res: Response, reply: BodyReply, chunk: number, interval: number): void {
  const bytes = bodyBytes(reply);
  writeHead(res, reply, bytes);
  let offset = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = (): void => {
    if (res.destroyed) return;
    res.write(bytes.subarray(offset, offset + chunk));
    offset += chunk;
    if (offset >= bytes.length) res.end();
    else timer = setTimeout(tick, interval);
  };
  whenStopping(res, () => {
    clearTimeout(timer);
    res.end(bytes.subarray(offset));
  });
  if (bytes.length === 0) res.end();
  else timer = setTimeout(tick, interval);
}

/**
 * A stream sent as `dribble` sends a body: whatever its parts, `chunk` bytes at a time, one
 * chunk every `interval` ms. Each write answers false until what waits is out (a stream that
 * minds it waits for onDrain); an end waits for it too. Once the sandbox is stopping, what
 * waits and what comes after goes at once.
 */
function dribbleStream(res: Response, reply: StreamReply, chunk: number, interval: number): void {
  let waiting = Buffer.alloc(0);
  let ending = false;
  let hurried = false;
  let timer: NodeJS.Timeout | undefined;
  const drained: Array<() => void> = [];
  const tick = (): void => {
    timer = undefined;
    if (res.destroyed || res.writableEnded) return;
    res.write(waiting.subarray(0, chunk));
    waiting = waiting.subarray(chunk);
    if (waiting.length > 0) timer = setTimeout(tick, interval);
    else if (ending) res.end();
    else for (const listener of drained.splice(0)) listener();
  };
  const push = (text: string): void => {
    if (text.length > 0) waiting = Buffer.concat([waiting, Buffer.from(text)]);
    if (hurried) {
      if (waiting.length > 0) res.write(waiting);
      waiting = Buffer.alloc(0);
    } else if (timer === undefined && waiting.length > 0) timer = setTimeout(tick, interval);
  };
  res.once('close', () => clearTimeout(timer));
  whenStopping(res, () => {
    hurried = true;
    clearTimeout(timer);
    timer = undefined;
    push('');
    if (ending) res.end();
    else for (const listener of drained.splice(0)) listener();
  });
  sendStream(res, {
    ...reply,
    stream: (sink) =>
      reply.stream({
        write: (part) => {
          if (sink.closed || ending) return false;
          push(part);
          return hurried;
        },
        onDrain: (listener) => void drained.push(listener),
        end: (part) => {
          if (sink.closed || ending) return;
          ending = true;
          push(part ?? '');
          if (timer === undefined) sink.end();
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

/** Never answers; drops the connection when `until` aborts or the server stops listening. */
function hold(res: Response, until: AbortSignal): Promise<void> {
  const drop = (): void => void res.socket?.destroy();
  if (until.aborted) return Promise.resolve(drop());
  until.addEventListener('abort', drop, { once: true });
  const watch = setInterval(() => {
    if (serverStopped(res)) drop();
  }, HOLD_WATCH_MS).unref();
  return new Promise((resolve) =>
    res.once('close', () => {
      clearInterval(watch);
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
    const { chunkBytes, intervalMs } = reply.dribble;
    return 'stream' in reply.reply ? dribbleStream(res, reply.reply, chunkBytes, intervalMs) : dribble(res, reply.reply, chunkBytes, intervalMs);
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
