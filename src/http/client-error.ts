import type { RequestHandler } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { domainMessages } from '../shared/index.js';
import { ApiError, type ErrorEnvelope } from './errors.js';
import { sendError } from './respond.js';

/** Messages of requests Node's HTTP parser rejects before the app sees them. */
export const clientErrorMessages = {
  headersTooLarge: domainMessages.headersTooLarge,
  malformed: 'The request is not valid HTTP/1.1 (bad request line, header name or value); it was not processed.',
  timeout: 'The request did not arrive in time (its headers within 60 s, all of it within 300 s); the connection is closed.',
  missingHost: 'An HTTP/1.1 request needs a Host header; send one (every HTTP client does, from the URL).',
  connect: 'The sandbox is not a proxy: CONNECT is not served; send the request itself to the sandbox.',
  expectation: (value: string) => `The sandbox meets no expectation but "Expect: 100-continue" (got "${value}"); send the request without that header.`,
} as const;

/** How long a connection answered and ended by the sandbox may stay half-open for its client to read the answer. */
const LINGER_MS = 1_000;

/**
 * Ends a connection the HTTP server no longer watches (a CONNECT, an upgrade request, a
 * refused listen session) after writing `data`, and closes it a moment later even if the
 * client never ends its side: a half-open socket would hold its descriptor and a stop
 * past its grace for as long as the client likes.
 */
export function endConnection(socket: Duplex, data?: string): void {
  socket.end(data);
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

const reasons: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** What Node's parser refused, by its error code, as the envelope's error entry: the part of the request to mend. */
const parserErrors: Record<string, ErrorEnvelope['errors'][number]> = {
  HPE_HEADER_OVERFLOW: { field: 'header', message: 'too large' },
  HPE_INVALID_CONTENT_LENGTH: { field: 'header.content-length', message: 'must be a number of bytes, digits only' },
  HPE_UNEXPECTED_CONTENT_LENGTH: { field: 'header.content-length', message: 'must be given once, and not with Transfer-Encoding' },
  HPE_INVALID_TRANSFER_ENCODING: { field: 'header.transfer-encoding', message: 'must end in chunked, and not come with Content-Length' },
  HPE_INVALID_METHOD: { field: 'method', message: 'must be an HTTP method (the provider API uses GET and POST)' },
  HPE_INVALID_VERSION: { field: 'version', message: 'must be HTTP/1.1 or HTTP/1.0' },
  HPE_INVALID_URL: { field: 'path', message: 'must begin with / (or be an absolute http URL), in characters a URL may hold' },
  HPE_INVALID_HEADER_TOKEN: { field: 'header', message: 'must be a name without spaces, a colon, and a value without control characters' },
  HPE_INVALID_CHUNK_SIZE: { field: 'body', message: 'is not valid chunked data' },
};

function answer(status: number, message: string, head: boolean, errors: ErrorEnvelope['errors'] = []): string {
  const body = JSON.stringify({ success: false, message, errors } satisfies ErrorEnvelope);
  return [
    `HTTP/1.1 ${status} ${reasons[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    head ? '' : body, // an answer to HEAD has no body, or the client reads it as the next response
  ].join('\r\n');
}

/**
 * Answers requests that Node's HTTP parser rejects (headers above `maxHeaderSize`,
 * NUL bytes or other invalid characters, a malformed request line, a bad Content-Length),
 * naming the part where the parser says which, a CONNECT (400), and those with an
 * `Expect` other than `100-continue` (417), with the error envelope instead of Node's
 * bare status line or a closed connection. Each has a log line, as a request the app
 * answers has (`request refused before the app`): its status, what was refused (the
 * parser's error code, the method CONNECT, the expectation) and the client's address, no
 * path or client (the parser gave up or the headers came late before either was known). A
 * body that timed out (408) has that line and its request's own, `"aborted": true`.
 *
 * @example answerClientErrors(server, 16384, logger)
 */
export function answerClientErrors(server: Server, maxHeaderSize: number, logger?: Pick<Logger, 'info'>): void {
  const refused = (status: number, socket: Duplex, fields: Record<string, unknown>): void => logger?.info({ status, ...fields, remote: (socket as Socket).remoteAddress }, 'request refused before the app');
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already on its way (keep-alive, pipelining) cannot be followed by another status line.
    const busy = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || busy) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const message = status === 431 ? clientErrorMessages.headersTooLarge(maxHeaderSize) : status === 408 ? clientErrorMessages.timeout : clientErrorMessages.malformed;
    const head = (error as { rawPacket?: Buffer }).rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    const named = status === 408 ? undefined : parserErrors[error.code ?? ''];
    refused(status, socket, { code: error.code });
    endConnection(socket, answer(status, message, head, named ? [named] : []));
  });
  // A CONNECT is a proxy's method: without a listener Node closes the connection without a word.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    refused(400, socket, { method: 'CONNECT' });
    endConnection(socket, answer(400, clientErrorMessages.connect, false, [{ field: 'method', message: 'must not be CONNECT' }]));
  });
  // Node asks about each request pipelined behind a 417 too, though the connection closes after the first answer: one line per connection.
  const refusedExpectation = new WeakSet<object>();
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const body = JSON.stringify({ success: false, message: clientErrorMessages.expectation(String(req.headers.expect)), errors: [{ field: 'header.expect', message: 'must be 100-continue or absent' }] } satisfies ErrorEnvelope);
    if (!refusedExpectation.has(req.socket)) refused(417, req.socket, { expect: String(req.headers.expect).slice(0, 64) });
    refusedExpectation.add(req.socket);
    res.writeHead(417, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), Connection: 'close' }).end(req.method === 'HEAD' ? undefined : body);
  });
}

/**
 * An HTTP/1.1 request without a Host header is refused (RFC 9112 requires one), with the
 * envelope naming it. Node's own check of it answers a bare status line, so the server
 * turns that off (`requireHostHeader: false`) and leaves it to this, the edge's first step
 * after the log line. HTTP/1.0 needs none.
 */
export const hostRequired: RequestHandler = (req, res, next) => {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
    res.setHeader('Connection', 'close');
    return sendError(res, new ApiError(400, clientErrorMessages.missingHost, [{ field: 'header.host', message: domainMessages.isRequired }]));
  }
  next();
};
