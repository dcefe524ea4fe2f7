/**
 * A real clock's state, as it is kept where several processes share it: from
 * `wall_base_ms` on its time is `sim_base_ms + (wall time - wall_base_ms) x speed`;
 * before then it runs at `previous_speed` (a speed change that takes effect a moment
 * later, so a process that still reads the old speed never gets ahead of the new one).
 */
export interface RealClockState {
  sim_base_ms: number;
  wall_base_ms: number;
  speed: number;
  previous_speed: number;
}
