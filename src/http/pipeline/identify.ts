import { authenticateOn, sandboxHeaders, soleAuthorization } from '../auth.js';
import { authorize } from '../roles.js';
import { laneOf, type Exchange } from './exchange.js';

/**
 * Stage 1, authenticate and authorize: who the bearer token is, and which client the
 * request acts for (its own, or the one an admin names). Throws the 401, 403 or 400 (also
 * for a sandbox header given twice).
 */
export function identify(x: Exchange): void {
  const { input, op, options } = x;
  const caller = authenticateOn(x.req.socket, options.registry, soleAuthorization(x.req));
  input.role = caller.role;
  x.callerClient = caller.client?.id;
  sandboxHeaders(x.req);
  input.client = authorize(options.registry, op, caller, input.headers);
  options.scope?.client(laneOf(input));
}
