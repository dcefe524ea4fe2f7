export { cancelMessages, cancelOrder } from './cancel.js';
export { orderDetail } from './detail.js';
export { createFields } from './fields.js';
export { OrdersService } from './service.js';
export { clientList, iso, orderState } from './views.js';
