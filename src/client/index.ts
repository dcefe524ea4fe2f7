/** Commands that talk HTTP to a running sandbox (`shipping-sandbox report`, `shipping-sandbox trigger`); they import no server code. */

export { runReport } from './report.js';
export { runTrigger } from './trigger.js';
