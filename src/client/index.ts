/** Commands that talk HTTP to a running sandbox (`shipping-sandbox report`, `deliveries recover`); they import no server code. */

export { runReport } from './report.js';
export { runDeliveries } from './deliveries.js';
