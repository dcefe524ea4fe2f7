/** Orders: create, list, get, cancel, the rules beyond the schema, and the views of an order. */

export { cancelMessages, cancelOrder } from './cancel.js';
export type { CancelDeps } from './cancel.js';
export { orderDetail } from './detail.js';
export { asTheProviderReads, createFields } from './fields.js';
export { plausibleCancel, plausibleCreate, plausibleDetail } from './plausible.js';
export { scenarioChanges } from './scenario-changes.js';
export { OrdersService } from './service.js';
export { clientList, iso, orderState } from './views.js';
