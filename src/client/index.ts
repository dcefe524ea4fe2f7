/** Commands that talk HTTP to a running sandbox (`shipping-sandbox report`, `trigger`, `deliveries recover`); they import no server code. */

export { runDeliveries } from './deliveries.js';
export { runReport } from './report.js';
export { runTrigger } from './trigger.js';
