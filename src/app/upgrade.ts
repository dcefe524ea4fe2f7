import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError, endConnection, messages } from '../http/index.js';
import { declaresABody } from '../shared/index.js';
import { answerOn } from './connections.js';

/** Whether a request asks for a WebSocket (the only upgrade the sandbox takes, on the listen path). */
export const isWebSocket = (req: IncomingMessage): boolean => (req.headers.upgrade ?? '').toLowerCase() === 'websocket';

/** Sockets whose 'drain' relayDrain relays. */
const relayed = new WeakSet<Socket>();

/**
 * Node stops relaying a socket's 'drain' to the answer it holds when it hands the socket
 * over with an upgrade request: an answer larger than the socket takes at once (a page, the
 * docs' script) would stop there for good, this request's or one pipelined before it and
 * still being written. The relay is the one Node's server keeps, once per socket.
 */
function relayDrain(socket: Socket): void {
  if (relayed.has(socket)) return;
  relayed.add(socket);
  socket.on('drain', () => {
    const answer = answerOn(socket);
    if (answer && !answer.writableEnded) answer.emit('drain');
  });
}

/**
 * A request offering an upgrade the sandbox does not take (h2c, or a WebSocket elsewhere
 * than the listen path) is answered as the plain request it also is, on a connection then
 * closed. Its body cannot be read once Node has handed the socket over, so one with a
 * body is answered 400 saying to send it without the Upgrade header.
 */
export function answerWithoutUpgrade(req: IncomingMessage, socket: Duplex, handle: (req: IncomingMessage, res: ServerResponse) => void): void {
  relayDrain(socket as Socket);
  // Pipelined behind an answer still to come on this connection: answered after it (Node allows one answer per socket at a time).
  const pending = answerOn(socket as Socket);
  if (pending) {
    pending.once('finish', () => (socket.destroyed || !socket.writable ? socket.destroy() : answerWithoutUpgrade(req, socket, handle)));
    pending.once('close', () => void (pending.writableFinished || socket.destroy()));
    return;
  }
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => {
    res.detachSocket(socket as Socket);
    endConnection(socket);
    // What Node's server does for its own answers: the log line, the journal and the metrics are written on 'close'.
    process.nextTick(() => {
      res.destroyed = true;
      res.emit('close');
    });
  });
  if (!declaresABody(req.headers)) return handle(req, res);
  res.writeHead(400, { 'Content-Type': 'application/json; charset=utf-8', Connection: 'close' });
  res.end(JSON.stringify(new ApiError(400, messages.unwantedUpgrade(String(req.headers.upgrade)), [{ field: 'header.upgrade', message: 'only GET /__sandbox/listen takes an upgrade (websocket)' }]).toEnvelope()));
}
