import { laneOf, type Exchange } from './exchange.js';

/**
 * Stage 2, admit: the rate limit of the caller's lane (rejects with the 429), then the
 * client's clock brought up to what a shared store keeps, so the request is served at the
 * client's time. An admin acting for a client spends the admins' budget, not the client's.
 */
export async function admit(x: Exchange): Promise<void> {
  const { input, options } = x;
  if (options.admit) await options.admit(laneOf(input));
  if (options.refreshClock) await options.refreshClock(input.client?.id ?? '');
}
