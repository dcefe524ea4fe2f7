/** A request as plain data (`OperationInput`, `ServedRequest`) and the request journal that records it. */

export { PendingAppends, journalRecorder } from './recorder.js';
export { declaredPlainLength } from './served.js';
export type { OperationInput, ServedRequest } from './served.js';
