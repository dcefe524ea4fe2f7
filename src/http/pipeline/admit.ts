import type { Exchange } from './exchange.js';

/**
 * Stage 2, admit: the client's rate limit (rejects with the 429), then its clock brought
 * up to what a shared store keeps, so the request is served at the client's time.
 */
export async function admit(x: Exchange): Promise<void> {
  const { input, options } = x;
  if (options.admit) await options.admit(input.client?.id ?? '(admin)');
  if (options.refreshClock) await options.refreshClock(input.client?.id ?? '');
}
