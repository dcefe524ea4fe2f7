import type { RealClockState } from '../records/index.js';

export type { RealClockState };

const YEAR_MS = 365.25 * 86_400_000;

/**
 * The last time the sandbox can show: answers give times as RFC 3339 date-times
 * (`now`, `created_at`, ...), whose years have four digits. Past it JavaScript writes
 * `+010000-01-01T...`, which no client parses as a date-time, and past 8.64e15 ms (year
 * 275,760) it cannot write a date at all, so no answer showing a time could be made.
 */
export const LAST_SHOWN_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The latest time an advance may move a clock to: ten years before the last time shown,
 * the room after it for the jobs of a clock standing there (journeys, webhook retries,
 * retention fall due days or weeks later).
 */
export const LATEST_CLOCK_MS = LAST_SHOWN_MS - 10 * YEAR_MS;

/** The latest manual clock start (`--clock-start`): a century of room for advances before the last time shown. */
export const LATEST_CLOCK_START_MS = LAST_SHOWN_MS - 100 * YEAR_MS;

/** Sandbox time in epoch milliseconds. Every due time is measured on it. */
export interface Clock {
  readonly mode: 'real' | 'manual';
  /** Simulated milliseconds per real millisecond (1 for a manual clock). */
  readonly speed: number;
  now(): number;
}

/**
 * Real time, optionally sped up: with speed 60 one real second is one simulated
 * minute. Simulated time starts at the real time when the sandbox starts.
 */
export class RealClock implements Clock {
  readonly mode = 'real';
  /** Simulated time at `wallBase`: the clock runs on from there at `speed` (before it, at `previousPace`). */
  private simBase = Date.now();
  private wallBase = this.simBase;
  private previousPace: number;

  constructor(private pace = 1) {
    if (!(pace > 0)) throw new RangeError('speed must be a positive number');
    this.previousPace = pace;
  }

  get speed(): number {
    return this.pace;
  }

  /**
   * Changes the speed: the time goes on from where it is (no jump), at the old pace for
   * `settleMs` more wall milliseconds, then at the new one.
   */
  setSpeed(speed: number, settleMs = 0): void {
    if (!(speed > 0)) throw new RangeError('speed must be a positive number');
    const wall = Date.now();
    const from = wall + settleMs;
    const pace = this.paceAt(wall);
    // A change within the settle of the one before: never behind either reading of the old one.
    this.simBase = Math.max(this.at(from), this.at(wall) + Math.floor(settleMs * pace));
    this.previousPace = pace;
    this.wallBase = from;
    this.pace = speed;
  }

  /** The state that `load` takes back (kept in a shared store). */
  state(): RealClockState {
    return { sim_base_ms: this.simBase, wall_base_ms: this.wallBase, speed: this.pace, previous_speed: this.previousPace };
  }

  /** Runs on from a kept state (another process's speed change). */
  load(state: RealClockState): void {
    this.simBase = state.sim_base_ms;
    this.wallBase = state.wall_base_ms;
    this.pace = state.speed;
    this.previousPace = state.previous_speed;
  }

  now(): number {
    return this.at(Date.now());
  }

  /** Real milliseconds until simulated time `at`. */
  realDelayUntil(at: number): number {
    const wall = Date.now();
    if (wall >= this.wallBase) return Math.max(0, Math.ceil((at - this.now()) / this.speed));
    const wallAt = at >= this.simBase ? this.wallBase + (at - this.simBase) / this.pace : this.wallBase - (this.simBase - at) / this.previousPace;
    return Math.max(0, Math.ceil(wallAt - wall));
  }

  /** The simulated time at wall time `wall`. */
  at(wall: number): number {
    return this.simBase + Math.floor((wall - this.wallBase) * this.paceAt(wall));
  }

  private paceAt(wall: number): number {
    return wall < this.wallBase ? this.previousPace : this.pace;
  }
}

/** A clock that moves only when told to, for tests and CI. */
export class ManualClock implements Clock {
  readonly mode = 'manual';
  readonly speed = 1;

  constructor(private current = Date.now()) {}

  now(): number {
    return this.current;
  }

  /** Moves the clock to `at`; it never moves backwards. */
  set(at: number): void {
    this.current = Math.max(this.current, at);
  }
}
