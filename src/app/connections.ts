import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Marks a connection whose client sent a request before the answer to its last one (HTTP pipelining). */
const PIPELINED = Symbol('pipelined');
/** Marks an answer the stop told to close its connection (see keepOpenFor). */
const CLOSED_BY_STOP = Symbol('closedByStop');

type Answer = ServerResponse & { [CLOSED_BY_STOP]?: true };
type Connection = Socket & { _httpMessage?: Answer | null; [PIPELINED]?: true };

/**
 * The answer a connection is writing or about to write: Node keeps it in `_httpMessage`
 * (http-terminator reads it so too). The one place that reads that internal.
 */
export const answerOn = (socket: Socket): Answer | null | undefined => (socket as Connection)._httpMessage;

/** The server's open connections, each from its start to its close. */
export function openConnections(server: Server): Set<Socket> {
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
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
