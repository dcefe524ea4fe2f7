import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The bounds on a body that goes on arriving after its request was answered: a request
 * refused before its body was read (no token, a declared length past the limit, a 415,
 * the 429 of too many bodies at once) or answered while it still sent (past the limit as
 * it arrived). Node reads such a body off the connection and drops it, so that the
 * connection can carry the next request: without a bound, a 2 GB body kept a core busy
 * for seconds, and a slow one held its connection until the request timeout.
 */
export interface UnreadBodyBounds {
  /** Bytes, and ms from the answer, dropped while the connection may still carry the next request. */
  keptBytes: number;
  keptMs: number;
  /**
   * Past those, the connection is half-closed (the client reads the end of its answer and
   * stops sending), and what still comes is dropped for at most these bytes and ms before
   * it is closed: closing at once, while the client still sends, makes the kernel reset the
   * connection, and many clients (fetch, urllib) then lose the answer they had not read yet.
   */
  lingerBytes: number;
  lingerMs: number;
  /** Half-closed, a connection on which nothing came for this long is closed: its client is not sending (a body held back). */
  lingerIdleMs: number;
}

export const UNREAD_BODY_BOUNDS: UnreadBodyBounds = { keptBytes: 16 * 1024 * 1024, keptMs: 10_000, lingerBytes: 112 * 1024 * 1024, lingerMs: 5_000, lingerIdleMs: 1_000 };

/** How often a body arriving after its answer is looked at: the bounds are kept to within what comes in this time. */
const LOOK_EVERY_MS = 50;

type Closable = Socket & { destroySoon?: () => void };

/**
 * Bounds what is read of `req`'s body once `res` is sent, if it is still arriving then
 * (see `UnreadBodyBounds`). An answer that closes its connection (the client sent
 * `Connection: close`, as Python's urllib does) lingers instead of closing at once: Node
 * closes it with `destroySoon`, which this replaces for that one call. Costs a listener per
 * request that declares a body; nothing more once the body has come whole.
 */
export function boundUnreadBody(req: IncomingMessage, res: ServerResponse, bounds: UnreadBodyBounds = UNREAD_BODY_BOUNDS): void {
  res.once('prefinish', () => {
    if (req.complete) return;
    const socket = req.socket as Closable;
    const destroySoon = socket.destroySoon;
    if (typeof destroySoon !== 'function') return;
    const own = (): void => {
      socket.destroySoon = destroySoon;
      if (req.complete) destroySoon.call(socket);
      else drain(req, socket, bounds, true);
    };
    socket.destroySoon = own;
    // Node's own 'finish' listener came first: it closed the connection (through `own`) or kept it for the next request.
    res.once('finish', () => {
      if (socket.destroySoon !== own) return;
      socket.destroySoon = destroySoon;
      if (!req.complete && !socket.destroyed) drain(req, socket, bounds, false);
    });
  });
}

/**
 * Reads and drops what comes of `req`'s body within the bounds, counted from the
 * connection's bytes read (Node drops an unread body in its parser, where no `data` event
 * shows it): kept open for the next request at first (unless `closing`), then half-closed
 * and lingering, then closed.
 */
function drain(req: IncomingMessage, socket: Socket, bounds: UnreadBodyBounds, closing: boolean): void {
  let lingering = false;
  let from = 0;
  let until = 0;
  let most = 0;
  const phase = (bytes: number, ms: number): void => {
    from = socket.bytesRead;
    until = Date.now() + ms;
    most = bytes;
  };
  const linger = (): void => {
    lingering = true;
    phase(bounds.lingerBytes, bounds.lingerMs);
    socket.end();
  };
  let seen = socket.bytesRead;
  let seenAt = Date.now();
  const look = (): void => {
    const now = Date.now();
    if (socket.bytesRead !== seen) [seen, seenAt] = [socket.bytesRead, now];
    const over = socket.bytesRead - from > most || now >= until || (lingering && now - seenAt >= bounds.lingerIdleMs);
    if (req.complete || socket.destroyed || (lingering && over)) {
      clearInterval(timer);
      // Half-closed, the connection carries nothing more: once the client has sent its last byte, closing it resets nothing.
      if (lingering) socket.destroy();
    } else if (over) linger();
  };
  if (closing) linger();
  else phase(bounds.keptBytes, bounds.keptMs);
  const timer = setInterval(look, LOOK_EVERY_MS).unref();
}

/** body-parser's error for a body past its limit, as the edge's refusals give it. */
export const tooLarge = (): Error => Object.assign(new Error('request entity too large'), { type: 'entity.too.large', status: 413 });

/**
 * How many times the limit a compressed body may be as sent before it is refused as it
 * comes: the limit counts its decoded bytes, which body-parser counts, but encoded bytes can
 * outnumber decoded ones (a streaming compressor's flushes double them), so only a body
 * far past the limit as sent is taken to be past it decoded.
 */
const COMPRESSED_AS_SENT = 8;

/**
 * Answers the 413 of a body once more bytes than `limitBytes` came, as they come: body-parser
 * answers it only once the whole body was read off the connection, so a chunked body past
 * the limit was read to its end (2 GB: seconds of a core), or held its connection until the
 * request timeout when sent slowly. The rest is read and dropped within `boundUnreadBody`'s
 * bounds. A compressed body is counted as sent (see COMPRESSED_AS_SENT).
 */
export function refuseOnceTooLarge(req: IncomingMessage, limitBytes: number, compressed: boolean, kept: (error: unknown) => void): void {
  const bound = compressed ? COMPRESSED_AS_SENT * limitBytes : limitBytes;
  let bytes = 0;
  const onData = (chunk: Buffer): void => {
    bytes += chunk.length;
    if (bytes <= bound) return;
    req.off('data', onData);
    kept(tooLarge());
  };
  req.on('data', onData);
  req.once('end', () => req.off('data', onData));
}
