/** The scheduler: job kinds registered by their features, due jobs claimed and run on their clients' clocks. */

export { Scheduler } from './scheduler.js';
export type { JobTry, SchedulerOptions } from './options.js';

// Job kinds, as features register them.
export { JobCannotRun, JobInterrupted } from './kinds.js';
export type { DropReason, JobHandler, JobKindSpec, PoolCaps } from './kinds.js';

// Numbers drawn in the order jobs were claimed.
export { inOrder } from './numbering-order.js';
