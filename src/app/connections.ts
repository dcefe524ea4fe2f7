import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { noteOfResponse } from '../http/index.js';

/** Marks a connection whose client sent a request before the answer to its last one (HTTP pipelining). */
const PIPELINED = Symbol('pipelined');
/** Marks an answer the stop told to close its connection (see keepOpenFor). */
const CLOSED_BY_STOP = Symbol('closedByStop');

/** Marks a connection a module took with an upgrade (a listen session's WebSocket). */
const UPGRADED = Symbol('upgraded');

type Answer = ServerResponse & { [CLOSED_BY_STOP]?: true };
type Connection = Socket & { _httpMessage?: Answer | null; [PIPELINED]?: true; [UPGRADED]?: true };

/**
 * Notes a connection a module took with an upgrade: the module closes it (a listen session at
 * its close), never the stop's sweep nor its grace. One answered as a plain request (an
 * upgrade the sandbox does not take) is no one's: the stop closes it as any other.
 */
export function noteUpgraded(socket: Socket): void {
  (socket as Connection)[UPGRADED] = true;
}

/**
 * The answer a connection is writing or about to write: Node keeps it in `_httpMessage`
 * (http-terminator reads it so too). The one place that reads that internal.
 */
export const answerOn = (socket: Socket): Answer | null | undefined => (socket as Connection)._httpMessage;

/**
 * What is left of the writes under way on a connection, as libuv counts it (`writeQueueSize`,
 * an internal of the socket's handle): a large answer is one write, which `writableLength`
 * counts whole until all of it is taken, so a slow reader's progress shows only here.
 */
const queuedOf = (socket: Socket): number | undefined => (socket as Socket & { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize;

/** How long an answer may wait with nothing of it taken by its client before its connection is closed. */
export const STALLED_ANSWER_MS = 60_000;

/**
 * The server's open connections, each from its start to its close. A connection whose
 * client takes nothing of an answer for `stalledMs` (it does not read: the answer waits in
 * memory, and so do those pipelined behind it) is closed and logged (with the answer's path
 * and client: behind a proxy, the address is the proxy's); a slow reader that
 * takes some of it meanwhile, and a request still waiting for its answer, are left alone.
 * Progress shows when the kernel takes more of the answer, every few hundred KB a reader
 * takes on a local network: one reading an answer larger than the kernel's buffers slower
 * than about 10 KB/s looks stalled. A sweep that comes late (the process was stopped or
 * blocked) starts every connection's wait again rather than close them all.
 */
export function openConnections(server: Server, logger?: Pick<Logger, 'warn'>, stalledMs = STALLED_ANSWER_MS): Set<Socket> {
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  const waited = new WeakMap<Socket, { length: number; queued: number | undefined; since: number }>();
  const every = Math.min(stalledMs / 4, 5_000);
  let swept = performance.now();
  const sweep = setInterval(() => {
    const now = performance.now();
    const late = now - swept > 2 * every;
    swept = now;
    for (const socket of connections) {
      const length = socket.writableLength;
      if (length === 0) {
        waited.delete(socket);
        continue;
      }
      const queued = queuedOf(socket);
      const last = waited.get(socket);
      if (late || last?.length !== length || last.queued !== queued) waited.set(socket, { length, queued, since: now });
      else if (now - last.since >= stalledMs) {
        const answer = answerOn(socket);
        const path = answer?.req?.url?.split('?')[0];
        const client = answer ? noteOfResponse(answer).clientId : undefined;
        logger?.warn({ path, client, remote: socket.remoteAddress, waiting_bytes: queued || length }, `closed a connection whose client took nothing of its answer for ${stalledMs / 1000} s`);
        socket.destroy();
      }
    }
  }, every).unref();
  server.once('close', () => clearInterval(sweep));
  return connections;
}

/** Notes a request that came in while an earlier answer on its connection was still to come (Node queues its answer behind). */
export function notePipelined(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket as Connection;
  if (answerOn(socket) !== res) socket[PIPELINED] = true;
}

/**
 * At a stop, the answers still to come of the requests in flight carry `Connection: close`
 * (Node writes it for an answer that is not to keep its connection alive):
 * their clients open a new connection for their next request (to another replica behind a
 * proxy) rather than send it on this one as it closes, which they would meet as a reset.
 * Not on a connection that pipelines: the answers queued behind would never be written. An
 * answer already under way (a stream) cannot say so.
 */
export function closeAfterAnswer(connections: Iterable<Socket>): void {
  for (const socket of connections as Iterable<Connection>) {
    const answer = answerOn(socket);
    if (answer && !answer.headersSent && !socket[PIPELINED] && answer.shouldKeepAlive) {
      answer.shouldKeepAlive = false;
      answer[CLOSED_BY_STOP] = true;
    }
  }
}

/**
 * A request pipelined behind one in flight as the stop began: that earlier answer keeps its
 * connection open after all, so that this request's refusal (a 503 saying the sandbox is
 * stopping) reaches its client instead of the connection closing under it.
 */
export function keepOpenFor(req: IncomingMessage, res: ServerResponse): void {
  const earlier = answerOn(req.socket as Connection);
  if (earlier && earlier !== res && !earlier.headersSent && earlier[CLOSED_BY_STOP]) earlier.shouldKeepAlive = true;
}

/** How long a stop waits for the answers in flight before it closes their connections. */
export const STOP_GRACE_MS = 10_000;

/**
 * Stops `server` listening and closes its connections as their answers end; all are closed
 * `graceMs` after the start at the latest. Resolves once every connection is closed.
 * Node counts a connection idle once its answer's end was called, bytes still queued or
 * not, and its http server's `close` and `closeIdleConnections` destroy the idle ones: that
 * cuts what a client has not taken yet (a large answer to a slow reader, the rest of a
 * dribbled one). So the listening socket is closed as a net server's, and each connection
 * is closed once it is idle by this sweep's own measure: no answer on its way, no bytes
 * queued, and nothing read from it since the sweep before (a request may be coming in that
 * Node has not handed over yet). A connection a module took with an upgrade is left to
 * that module. At the grace, every other one is closed: Node's `closeAllConnections` no
 * longer knows those it handed over with an upgrade request (one answered as a plain request).
 * The http server's own `close` runs once all are closed, to stop its timer of request
 * timeouts (a second 'close' event follows: the server's listeners use `once`).
 */
export function drainConnections(server: Server, connections: Set<Socket>, graceMs = STOP_GRACE_MS): Promise<void> {
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  const heard = new WeakMap<Socket, number>();
  const closeIdle = (): void => {
    for (const socket of connections as Set<Connection>) {
      const read = socket.bytesRead;
      const quiet = heard.get(socket) === read;
      heard.set(socket, read);
      if (quiet && socket.writableLength === 0 && answerOn(socket) == null && !socket[UPGRADED]) socket.destroy();
    }
  };
  closeIdle();
  const idle = setInterval(closeIdle, 50).unref();
  const grace = setTimeout(() => {
    server.closeAllConnections();
    for (const socket of connections as Set<Connection>) if (!socket[UPGRADED]) socket.destroy();
  }, graceMs).unref();
  return closed.finally(() => {
    clearInterval(idle);
    clearTimeout(grace);
    // Not listening any more: it answers ERR_SERVER_NOT_RUNNING, having stopped its timer.
    server.close(() => undefined);
  });
}
