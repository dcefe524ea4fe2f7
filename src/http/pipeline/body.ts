import { declaresABody, isJsonType } from '../../shared/index.js';
import { bodyBytesOf, bodyRefusalOf, bodyUnread, parsedBody, rawBodyOf } from '../edge.js';
import { ApiError, invalid } from '../errors.js';
import { LARGE_BODY_BYTES } from '../large-bodies.js';
import { laneOf, type Exchange } from './exchange.js';

/** The largest body a request refused before its turn still has parsed for the journal. */
export const JOURNALED_UNREAD_BODY_BYTES = 64 * 1024;

/**
 * Before the turn, a large JSON body (over LARGE_BODY_BYTES) is parsed and validated on
 * the worker thread (LargeBodies), off the loop that serves every client; the body stage
 * and validation take its verdict in the turn (a valid body is parsed there, and not
 * validated again).
 */
export function screenBody(x: Exchange): Promise<void> | undefined {
  const check = x.options.largeBodies;
  const raw = rawBodyOf(x.req);
  // Most bodies are small: no promise to wait for on their way.
  if (!check || x.op.body === 'none' || raw === undefined || raw.length <= LARGE_BODY_BYTES || x.req.socket.destroyed) return undefined;
  return check(laneOf(x.input), x.op.operationId, raw).then((verdict) => {
    x.bodyVerdict = verdict;
  });
}

/**
 * Stage 5, the body: the JSON body read at the edge is parsed now, in the client's turn,
 * so that parsing one partner's large bodies takes that partner's turns. Throws the 400
 * naming `body` when it is not JSON or is nested too deep, or the edge's refusal of a body
 * it could not read (a 413, a 415, a 400 naming `body`). A body the worker found
 * invalid is not parsed: validation refuses it with the worker's problems.
 */
export function readBody({ op, req, input, bodyVerdict }: Exchange): void {
  // A body the edge could not read (too large, in another charset than UTF-8, not in the encoding it says), on any operation: a GET's too.
  const refusal = bodyRefusalOf(req);
  if (refusal) {
    if (bodyUnread(req)) input.bodyUnread = true;
    throw refusal;
  }
  if (op.body === 'none') return refuseUnwantedBody(op, req);
  // The bytes first: a body that does not parse is still told apart from another by them (the readiness report).
  input.bodyBytes = rawBodyOf(req);
  if (bodyVerdict && 'refused' in bodyVerdict) throw new ApiError(bodyVerdict.refused.status, bodyVerdict.refused.message, bodyVerdict.refused.errors);
  if (!bodyVerdict || bodyVerdict.problems.length === 0) input.body = parsedBody(req);
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

/**
 * A control call that changes something and takes no body, sent one: nothing is done, as for a
 * field a call does not know (`{"x":1}` to `POST /__sandbox/reset` must not reset). None,
 * whitespace, `{}` and `null` are no body. A read (GET) is served as the read it is, and the
 * provider's operations ignore a body, as the provider does.
 */
function refuseUnwantedBody(op: Exchange['op'], req: Exchange['req']): void {
  if (!op.path.startsWith('/__sandbox/') || op.method.toLowerCase() === 'get') return;
  const raw = rawBodyOf(req);
  // A body of another type is not read at the edge (curl -d sends a form): one is sent all the same.
  const unread = raw === undefined && declaresABody(req.headers) && !isJsonType(req.headers['content-type']);
  // Trimmed first, then one anchored test: a pattern with whitespace on both sides of an optional part backtracks on a long body.
  const text = raw?.toString('utf8').trim() ?? '';
  if (!unread && (text === '' || text === 'null' || /^\{\s*\}$/.test(text))) return;
  throw invalid([{ field: 'body', message: 'this call takes no body: send none, or {}' }]);
}
