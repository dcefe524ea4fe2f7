export { LATEST_CLOCK_MS, LATEST_CLOCK_START_MS, ManualClock, RealClock } from './clock.js';
export type { Clock } from './clock.js';
export { Clocks } from './clocks.js';
export { loadClocks } from './load.js';
export { ClockService } from './service.js';
export type { DueWork } from './service.js';
export { ClockSync } from './sync.js';
// The longest slice of due jobs on the event loop, under the name src/http/turns.ts still
// imports; its home is src/shared (MAX_SLICE_MS).
export { MAX_SLICE_MS as MAX_TURN_MS } from '../shared/index.js';
