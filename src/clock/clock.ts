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
  /** Simulated time at `wallBase`: the clock runs on from there at `speed`. */
  private simBase = Date.now();
  private wallBase = this.simBase;

  constructor(private pace = 1) {
    if (!(pace > 0)) throw new RangeError('speed must be a positive number');
  }

  get speed(): number {
    return this.pace;
  }

  /** Changes the speed from now on: the time goes on from where it is, at the new pace (no jump). */
  setSpeed(speed: number): void {
    if (!(speed > 0)) throw new RangeError('speed must be a positive number');
    this.simBase = this.now();
    this.wallBase = Date.now();
    this.pace = speed;
  }

  now(): number {
    return this.simBase + Math.floor((Date.now() - this.wallBase) * this.pace);
  }

  /** Real milliseconds until simulated time `at`. */
  realDelayUntil(at: number): number {
    return Math.max(0, Math.ceil((at - this.now()) / this.speed));
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
