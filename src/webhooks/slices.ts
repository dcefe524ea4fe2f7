import { letRequestsIn } from '../shared/index.js';

/**
 * Paused deliveries made due again per unit of work when an endpoint is set or enabled
 * again: the event loop is let go between units, so a full outbox made due again does
 * not hold other clients' requests for the whole of it.
 */
export const RESUME_SLICE = 200;

/**
 * Runs `slice`, a unit of work that handles up to RESUME_SLICE items and says how many,
 * until one handles fewer, letting the event loop go between units; returns the total.
 */
export async function inSlices(slice: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const handled = await slice();
    total += handled;
    if (handled < RESUME_SLICE) return total;
    await letRequestsIn();
  }
}
