import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseBytes } from 'bytes';
import express, { type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import type { Logger } from 'pino';
import { ApiError, messages, toApiError } from './errors.js';
import { withoutUpgrade } from './listen-handshake.js';
import { LISTEN_PATH } from './listen-protocol.js';
import { BODY_ENCODINGS, charsetOf, domainMessages, isJsonType, isUtf8Charset, TooManyRequests } from '../shared/index.js';
import { BodiesReading, MAX_BODIES_READING } from './bodies-reading.js';
import { declaresBody, inviteBody } from './continue.js';
import { parseJsonBytes } from './json-bytes.js';
import { sendError } from './respond.js';
import { boundUnreadBody, refuseOnceTooLarge, tooLarge } from './unread-bodies.js';
import { noteOfResponse } from './response-notes.js';
import { redactedPath } from '../requests/index.js';

/**
 * Middleware run one after another as one layer of express's router. Each layer costs
 * the router's matching and bookkeeping on every request, so the sandbox's own edge is
 * one layer. An error (passed on, thrown, or a rejected promise) goes to express's error
 * handlers, and so does `next('route')`, which leaves the series.
 *
 * @example app.use(series(requestLog(logger), cors(['*']), jsonBody('1mb')))
 */
export function series(...handlers: RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return next(error);
      const handler = handlers[i++];
      if (!handler) return next();
      try {
        const returned = handler(req, res, step) as unknown;
        // As express does: a promise rejected without a reason is an error all the same.
        if (returned instanceof Promise) returned.catch((reason: unknown) => next(reason ?? new Error('Rejected promise')));
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}

/**
 * Reads the bytes of JSON bodies of JSON content types; other bodies are left for the 415
 * check. The bytes are parsed later, by `parsedBody`, once the request has its client's
 * fair turn: parsing a large body is the loop's work, and done here, as bodies arrive,
 * one partner's large bodies would delay every other partner's requests outside the turns.
 *
 * Only UTF-8 is taken (RFC 8259: JSON between systems is UTF-8): a body in any other
 * charset (`utf-16le`, `utf-7`, `utf-8.`, ...) is refused with a 415 before it is decoded.
 * That keeps the depth check exact: a body nested deeper than 64 levels is refused from
 * its bytes before it is parsed (a 400 naming body); in UTF-16 or UTF-7 a bracket or a
 * quote need not be its own byte, so a deep body could pass the scan.
 */
export function jsonBody(limit: string, callerOf: (req: IncomingMessage) => object | undefined = () => ANYONE): RequestHandler {
  const reading = new BodiesReading();
  const limitBytes = parseBytes(limit) ?? Infinity;
  const raw = express.raw({
    limit,
    type: () => true,
    verify: (req, _res, bytes) => {
      const charset = charsetOf(req.headers['content-type']);
      if (!isUtf8Charset(charset)) throw new UnsupportedCharset(charset);
      rawBodies.set(req, bytes);
    },
  });
  // body-parser's way with a body it does not read: the request goes on, its `body` undefined.
  const unread = express.raw({ type: () => false });
  return (req, res, next) => {
    // A body the edge cannot read is answered by the operation's body stage, so that the
    // refusal is journaled and judged as that operation's (a client sending JSON in UTF-16
    // sees it in its journal); a path no operation serves answers its own 404 or 405. A
    // client that left while its body was read has nothing to be answered.
    let done = (): void => undefined;
    let answered = false;
    const kept = (error?: unknown): void => {
      if (answered) return; // a body refused as it arrived: body-parser's own word comes once the rest was read
      answered = true;
      done();
      const refusal = error === undefined || error === null ? undefined : bodyRefusal(error, limit, req);
      if (refusal === undefined) return next(error);
      if (req.socket.destroyed) return next(Object.assign(new Error('request aborted'), { type: 'request.aborted' }));
      bodyRefusals.set(req, refusal);
      next();
    };
    // A body is read only with a token that authenticates (every operation taking a body
    // needs one), so that anyone without a token cannot make the process read large bodies.
    // The token is looked up once: on a new connection that is a digest and a comparison with every token.
    const declared = declaresBody(req);
    if (declared) boundUnreadBody(req, res);
    const caller = declared && isJsonType(req.headers['content-type']) ? callerOf(req) : undefined;
    if (caller === undefined) return unread(req, res, kept);
    // body-parser decodes zstd where Node's zlib has it (Node 24 on): the encodings taken stay the same on every Node.
    const encoding = req.headers['content-encoding']?.trim().toLowerCase();
    if (encoding !== undefined && !BODY_ENCODINGS.has(encoding)) {
      return kept(Object.assign(new Error(`unsupported content encoding "${encoding}"`), { type: 'encoding.unsupported', status: 415 }));
    }
    const started = reading.start(caller);
    if (started === undefined) {
      // Not read: the connection closes after the answer (lingering while the client still sends, see boundUnreadBody).
      res.setHeader('Connection', 'close');
      bodyRefusals.set(req, toApiError(new TooManyRequests(domainMessages.tooManyBodiesReading(MAX_BODIES_READING), 1)));
      return next();
    }
    done = started;
    // However its reading ends: a compressed body cut off never calls back (the decoder gets no end).
    req.once('close', done);
    // Refused by its headers, a body is answered before any of it is read (an `Expect: 100-continue` client is then not told to send it).
    const refused = headerRefusal(req, limitBytes);
    inviteBody(res, () => refused);
    if (refused !== undefined) return kept(refused);
    raw(req, res, kept);
    refuseOnceTooLarge(req, limitBytes, encoding !== undefined && encoding !== 'identity', kept);
  };
}

/**
 * What a body is refused for from its request's headers alone, as reading it would refuse
 * it (body-parser reads a body it refuses to its end): a declared length past the limit
 * (not compressed: the limit counts decoded bytes), then a charset other than UTF-8.
 */
function headerRefusal(req: IncomingMessage, limitBytes: number): Error | undefined {
  if ((req.headers['content-encoding'] || 'identity').toLowerCase() === 'identity' && Number(req.headers['content-length']) > limitBytes) return tooLarge();
  const charset = charsetOf(req.headers['content-type']);
  return isUtf8Charset(charset) ? undefined : new UnsupportedCharset(charset);
}

/** The caller of a `jsonBody` given no way to tell callers apart (tests of the edge alone). */
const ANYONE = {};

const bodyRefusals = new WeakMap<IncomingMessage, ApiError>();

/** The answer to a request whose body the edge could not read (too large, not UTF-8, not the encoding it says, one too many at once), if any. */
export const bodyRefusalOf = (req: IncomingMessage): ApiError | undefined => bodyRefusals.get(req);

/**
 * Whether the edge refused to read the request's body (its token had as many being read as
 * it may): what it sent is unknown. That is the edge's only 429; its other refusals read
 * the body or judge it by its headers.
 */
export const bodyUnread = (req: IncomingMessage): boolean => bodyRefusals.get(req)?.status === 429;

/**
 * The answer to an error of reading a body: a 413, a 415 naming the header, or a 400
 * naming `body`; undefined for an error that is not the body's (the client went away, a
 * fault of the server's).
 */
function bodyRefusal(error: unknown, limit: string, req: IncomingMessage): ApiError | undefined {
  // From the verify hook, whichever type body-parser then gives the error.
  if (error instanceof UnsupportedCharset) return charsetError(error.charset);
  const { type, status, code } = error as { type?: string; status?: number; code?: unknown };
  switch (type) {
    case 'entity.too.large':
      return new ApiError(413, messages.bodyTooLarge(limit), [{ field: 'body', message: `must be at most ${limit}` }]);
    case 'charset.unsupported':
      return charsetError(String((error as { charset?: string }).charset ?? req.headers['content-type']));
    case 'encoding.unsupported':
      return new ApiError(415, messages.unsupportedEncoding(String(req.headers['content-encoding'])), [{ field: 'header.content-encoding', message: 'must be gzip, deflate, br or identity' }]);
    case 'request.aborted': // the client left: nothing to answer
    case 'entity.verify.failed': // a verify hook's own failure, answered as it is
      return undefined;
  }
  // zlib's or brotli's own words ("incorrect header check") name no field.
  if (typeof code === 'string' && /^(Z_|ERR__ERROR_FORMAT|ERR_BROTLI)/.test(code)) {
    const encoding = String(req.headers['content-encoding']);
    return new ApiError(400, messages.undecodableBody(encoding), [{ field: 'body', message: `is not valid ${encoding} data` }]);
  }
  if (typeof status === 'number' && status >= 400 && status < 500) return new ApiError(status, String((error as Error).message ?? 'Bad request'));
  return undefined;
}

const rawBodies = new WeakMap<IncomingMessage, Buffer>();

/** The bytes of a request's JSON body as read; undefined when none was read. */
export const rawBodyOf = (req: IncomingMessage): Buffer | undefined => rawBodies.get(req);

/** The size of a request's JSON body as read (0: none read). */
export const bodyBytesOf = (req: IncomingMessage): number => rawBodies.get(req)?.length ?? 0;

/**
 * The request's JSON body, parsed: undefined when none was read. Throws a 400 naming
 * `body` when it is nested too deep or is not JSON (an object or an array, as body-parser's
 * strict mode took). Parses once: a second call answers the first one's value.
 */
export function parsedBody(req: IncomingMessage): unknown {
  if (parsed.has(req)) return parsed.get(req);
  const raw = rawBodies.get(req);
  if (raw === undefined) return undefined;
  const value = parseJsonBytes(raw);
  parsed.set(req, value);
  return value;
}

const parsed = new WeakMap<IncomingMessage, unknown>();

/** Thrown by `jsonBody`'s verify hook: the body's charset is not UTF-8. */
export class UnsupportedCharset extends Error {
  readonly status = 415;
  constructor(readonly charset: string) {
    super(messages.unsupportedCharset(charset));
  }
}

/** The 415 for a charset other than UTF-8, naming the header. */
const charsetError = (charset: string): ApiError =>
  new ApiError(415, messages.unsupportedCharset(charset), [{ field: 'header.content-type', message: 'charset must be utf-8' }]);

/** The answer to a path no spec serves; the listen session's, asked without its WebSocket upgrade, says what it takes. */
export const unknownPath: RequestHandler = (req, res) => {
  sendError(res, req.path === LISTEN_PATH && req.method === 'GET' ? withoutUpgrade() : new ApiError(404, messages.unknownPath(req.method, req.path)));
};

/**
 * `app` as node's request listener, with the envelope as express's last resort: a request
 * target its router cannot parse (`GET http://xn--/v1/order`) never reaches a middleware,
 * and express's own final handler would answer it with an HTML page.
 */
export function withEnvelope(app: (req: IncomingMessage, res: ServerResponse, done: (error?: unknown) => void) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) =>
    app(req, res, (error?: unknown) => {
      const answer = error ?? new ApiError(404, messages.unknownPath(req.method ?? 'GET', req.url ?? ''));
      sendError(res as Response, answer);
    });
}

/** Turns any stray error into the envelope: a body's refusal kept for no operation (before the router met one), express's own. */
export function errorEnvelope(limit: string): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    if ((error as { type?: string }).type === 'request.aborted') return void res.destroy();
    return sendError(res, bodyRefusal(error, limit, req) ?? error);
  };
}

/** The longest path a request's log line holds whole. */
export const LOGGED_PATH_CHARS = 512;

/**
 * One structured log line per request: method, path, status, duration, client (never the
 * token), the fault rule applied to it if one was, once its connection is done with it; a
 * request the client gave up on before the answer ended (a held or slow answer, say) says
 * `aborted: true`, with the status sent, or null when none was. The line holds only those
 * fields, so it skips the logger's redaction, which cost four times the rest of the line
 * (a failure's error still goes through it).
 */
export function requestLog(logger: Pick<Logger, 'child' | 'error'>, secretsOf: (clientId: string | undefined) => readonly string[] = () => []): RequestHandler {
  const lines = logger.child({}, { redact: [] });
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('close', () => {
      const note = noteOfResponse(res);
      const finished = res.writableFinished;
      // A token sent in a path by mistake is not logged (redacted as the journal redacts it): the client's, or any, for a request of no client known.
      const path = redactedPath(req.path, secretsOf(note.clientId));
      const line: Record<string, unknown> = {
        method: req.method,
        // Cut: anyone, with no token, sent 15 KB paths and wrote 16 MB of log a second.
        path: path.length <= LOGGED_PATH_CHARS ? path : `${path.slice(0, LOGGED_PATH_CHARS)}… (${path.length} characters)`,
        status: finished || res.headersSent ? res.statusCode : null,
        ms: Number(process.hrtime.bigint() - start) / 1e6,
        client: note.clientId,
        op: note.operationId,
      };
      const fault = note.faultRule?.();
      if (fault !== undefined) line.fault = fault;
      if (!finished) line.aborted = true;
      if (note.error) logger.error({ ...line, err: note.error }, 'request failed');
      else lines.info(line, 'request');
    });
    next();
  };
}
