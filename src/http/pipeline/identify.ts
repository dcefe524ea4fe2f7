import { authenticateOn } from '../auth.js';
import { authorize } from '../roles.js';
import { ApiError, messages } from '../errors.js';
import { domainMessages } from '../../shared/index.js';
import { laneOf, type Exchange } from './exchange.js';

/**
 * Stage 1, authenticate and authorize: who the bearer token is, and which client the
 * request acts for (its own, or the one an admin names). Throws the 401, 403 or 400.
 */
export function identify(x: Exchange): void {
  const { input, op, options } = x;
  // Node keeps the first of two Authorization headers and drops the other: of two tokens one would be taken without a word.
  // A 401 as for a malformed header (every secured operation documents it).
  if (authorizationCount(x.req.rawHeaders) > 1) {
    throw new ApiError(401, messages.twoAuthorizations, [{ field: 'header.authorization', message: domainMessages.givenOnce }], { 'WWW-Authenticate': 'Bearer error="invalid_request"' });
  }
  const caller = authenticateOn(x.req.socket, options.registry, input.headers.authorization);
  input.role = caller.role;
  input.client = authorize(options.registry, op, caller, input.headers);
  options.scope?.client(laneOf(input));
}

/** How many Authorization headers a request has (its raw headers are name, value, name, value, ...). */
function authorizationCount(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 13 && raw[i]!.toLowerCase() === 'authorization') n += 1;
  return n;
}
