/** Commands that talk HTTP to a running sandbox (`shipping-sandbox report`, `trigger`, `deliveries recover`); they import no server code. */
// The Testcontainers module (testcontainers.ts) is an entry of its own, `shipping-sandbox/testcontainers`,
// not re-exported here: it needs the optional `testcontainers` package, which the CLI must not load.

export { runDeliveries } from './deliveries.js';
export { runReport } from './report.js';
export { runTrigger } from './trigger.js';
