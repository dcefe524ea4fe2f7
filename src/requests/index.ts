/** A request as plain data (`OperationInput`, `ServedRequest`), the request journal that records it, and counting its entries. */

export { checkRequestMatch, countMatching } from './count.js';
export type { RequestMatch } from './count.js';
export { PendingAppends, journalRecorder } from './recorder.js';
export { redactedPath, redactedText } from './redaction.js';
export { declaredPlainLength } from './served.js';
export type { AnsweredOrder, OperationInput, ServedRequest } from './served.js';
