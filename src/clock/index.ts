export { LATEST_CLOCK_MS, LATEST_CLOCK_START_MS } from './clock.js';
export type { Clocks } from './clocks.js';
export { JobInterrupted, MAX_TURN_MS, Scheduler } from './scheduler.js';
export type { JobHandler } from './scheduler.js';
export { ClockService, loadClocks } from './service.js';
export { ClockSync } from './sync.js';
export { inTurn } from './turns.js';
