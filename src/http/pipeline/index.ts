/** The stages of a request (identify, admit, arrive, fair turn, body, validate, intercept, handle, observe) and the interceptors (faults, Prefer). */

export { performFault } from './fault-actions.js';
export { preferInterceptor } from './prefer.js';
export type { PipelineOptions } from './options.js';
export { serveOperation } from './serve.js';
export { ADMIN_LANE } from './exchange.js';
export type { ServeOperation } from './serve.js';
export { MAX_HELD_PER_CLIENT, faultInterceptor } from './faults.js';
