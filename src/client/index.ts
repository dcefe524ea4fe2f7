/** Commands that talk to a running sandbox (`shipping-sandbox report`, `trigger`, `deliveries list`, `deliveries recover`, `listen`); they import no server code. */
// The Testcontainers module (testcontainers.ts) is an entry of its own, `shipping-sandbox/testcontainers`,
// not re-exported here: it needs the optional `testcontainers` package, which the CLI must not load.

export { executeRecover, recoverProgram, runDeliveries, unknownDeliveriesCommand } from './deliveries.js';
export { deliveryTable, executeList, listProgram } from './deliveries-list.js';
export { executeListen, listenProgram, runListen } from './listen.js';
export { executeReport, reportProgram, runReport } from './report.js';
export { executeTrigger, triggerProgram, runTrigger } from './trigger.js';
export type { RecoverCommand } from './deliveries.js';
export type { ListCommand, ListedDelivery } from './deliveries-list.js';
export type { ListenCommand } from './listen.js';
export type { ReportCommand } from './report.js';
export type { TriggerCommand } from './trigger.js';
