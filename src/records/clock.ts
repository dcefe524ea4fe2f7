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

/**
 * A client's sandbox clock (DESIGN "Client clocks"): its time is the sandbox's time plus
 * `offset_ms` (real clock), or stands at `now_ms` (manual clock); it never moves back.
 */
export interface ClientClock {
  /** Real clock: how far the client's time runs ahead of the sandbox's; each jump (advance) adds to it. */
  offset_ms: number;
  /** The client's time when this was saved: where a manual clock stands, and what a real clock never restarts behind. */
  now_ms: number;
}

/** The sandbox's real clock as a shared store keeps it, with the `--speed` it was last started with. */
export interface KeptRealClock extends RealClockState {
  started_speed: number;
}

/** The clocks as a shared store keeps them. */
export interface KeptClocks {
  /** Each client's clock that runs apart from the sandbox's. */
  clients: Map<string, ClientClock>;
  /** Where the sandbox's manual clock stands. */
  manualMs?: number;
  /** The sandbox's real clock: its pace, and where it stands. */
  real?: KeptRealClock;
}
