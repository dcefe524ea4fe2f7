/** Sandbox time: the real and manual clocks, one clock per client, their advances and their kept state. */

export { LATEST_CLOCK_MS, LATEST_CLOCK_START_MS, ManualClock, RealClock } from './clock.js';
export type { Clock } from './clock.js';
export { Clocks } from './clocks.js';
export { clockStartPassed, loadClocks } from './load.js';
export { ClockService } from './service.js';
export type { DueWork, KeepClock } from './service.js';
export { ClockSync } from './sync.js';
