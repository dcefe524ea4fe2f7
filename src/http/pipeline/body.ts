import { bodyBytesOf, parsedBody, rawBodyOf } from '../edge.js';
import type { Exchange } from './exchange.js';

/** The largest body a request refused before its turn still has parsed for the journal. */
export const JOURNALED_UNREAD_BODY_BYTES = 64 * 1024;

/**
 * Stage 5, the body: the JSON body read at the edge is parsed now, in the client's turn,
 * so that parsing one partner's large bodies takes that partner's turns. Throws the 400
 * naming `body` when it is not JSON or is nested too deep.
 */
export function readBody({ op, req, input }: Exchange): void {
  if (op.body === 'none') return;
  input.body = parsedBody(req);
  input.bodyBytes = rawBodyOf(req);
}

/**
 * A request refused before its body stage (a 401, a 403, a 429) is journaled with its
 * body as sent when the body is small; a large one is not parsed for that, as it would
 * cost the loop outside the turns. A body that does not parse is journaled as none.
 */
export function readBodyForJournal(x: Exchange): void {
  if (x.input.body !== undefined || x.op.body === 'none' || bodyBytesOf(x.req) > JOURNALED_UNREAD_BODY_BYTES) return;
  try {
    readBody(x);
  } catch {
    // The refusal already says what was wrong with the request.
  }
}
