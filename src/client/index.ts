/** Commands that talk HTTP to a running sandbox (`shipping-sandbox report`); they import no server code. */

export { runReport } from './report.js';
