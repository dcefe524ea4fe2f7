import type { RealClock } from './clock.js';
import type { Meta } from '../records/index.js';

/** How often a real clock running at another pace than wall time's notes how far it has run. */
export const KEEP_EVERY_MS = 1_000;

/**
 * The real clock's state as the data file keeps it. At wall pace nothing more is needed:
 * it runs on through a stop as wall time does. At another pace, the wall time up to which
 * it is known to have run: `ahead` ms from now (two beats of the keeper, so a crash just
 * before a beat is covered), or the very moment of a stop (0).
 */
export function keptState(base: RealClock, ahead = 2 * KEEP_EVERY_MS): Meta['real_clock'] {
  const state = base.state();
  return state.speed === 1 ? state : { ...state, kept_until_wall_ms: Date.now() + ahead };
}
