import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** Whether a request has a body, as body-parser tells (a request without one is not read, whatever its headers say of it). */
export const declaresBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number.parseInt(req.headers['content-length'] ?? '', 10));

/** Whether a request has a body to invite: one body-parser reads, other than `Content-Length: 0` (which it reads, though nothing is to be sent). */
const bodyToInvite = (req: IncomingMessage): boolean => declaresBody(req) && Number.parseInt(req.headers['content-length'] ?? '', 10) !== 0;

/** The answers whose request asked to be told before it sends its body, and was not told yet. */
const asked = new WeakSet<ServerResponse>();

/**
 * A request that asks to be told before it sends its body (`Expect: 100-continue`) is told
 * (`100 Continue`) only when its body is about to be read (see `inviteBody`), not at once
 * as Node would. A request refused first (no token that authenticates, a type, encoding or
 * charset never read, one body too many, a declared length past the limit) is answered
 * without its body being sent, and Node closes its connection. A request without a body
 * is told at once, as Node would, and keeps its connection.
 */
export function continueWhenRead(server: Server, handle: (req: IncomingMessage, res: ServerResponse) => void): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (bodyToInvite(req)) asked.add(res);
    else res.writeContinue();
    handle(req, res);
  });
}

/**
 * For a body about to be read: when its request asked to be told, tells it to send the
 * body, unless `refusal` (what its headers alone refuse it for) has an answer first.
 * That refusal, if any.
 */
export function inviteBody(res: ServerResponse, refusal: () => Error | undefined): Error | undefined {
  if (!asked.delete(res)) return undefined;
  const refused = refusal();
  if (refused === undefined) res.writeContinue();
  return refused;
}
