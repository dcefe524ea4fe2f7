/** One file of operation handlers per feature: each turns an `OperationInput` into a service call and a `Reply`. */

export { assumedOrderHandlers } from './assumed-orders.js';
export { providerChecks } from './checks.js';
export type { RequestCheck } from './checks.js';
export { controlHandlers } from './control.js';
export type { ResetPart } from './control.js';
export { coverageHandlers } from './coverage.js';
export { faultHandlers } from './faults.js';
export { orderHandlers } from './orders.js';
export { ShippingFeeStream } from './rates-stream.js';
export type { StreamStats } from './rates-stream.js';
export { rateHandlers } from './rates.js';
export { recoverHandlers } from './recover.js';
export { reportHandlers } from './report.js';
export { requestHandlers } from './requests.js';
export { stateHandlers } from './states.js';
export { chaosHeaderCheck, webhookHandlers } from './webhooks.js';
