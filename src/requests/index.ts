export { PendingAppends, journalRecorder } from './recorder.js';
export { declaredPlainLength } from './served.js';
export type { OperationInput, ServedRequest } from './served.js';
