import type { Exchange } from './exchange.js';

/**
 * Stage 3, arrive: once the client is known, the request's arrival is stamped on that
 * client's clock and numbered among its requests (its journal ids). Runs once; a request
 * refused before it (a 403 of its role, a header given twice) is stamped on its way out,
 * one the rate limit refuses as it is read (see admit).
 */
export function arrive(x: Exchange): void {
  const { input, served, options } = x;
  if (x.known || !input.client) return;
  x.known = true;
  served.arrivedAt = options.now(input.client.id);
  if (options.arrival) served.seq = options.arrival(input.client.id);
}
