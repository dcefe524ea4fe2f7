/** Shipping fees and estimates: tariffs, chargeable weight, quotes and their stream. */

export { orderRate } from './order-rate.js';
export { quoteCourier } from './quote.js';
export type { RateRequest } from './quote.js';
export { ESTIMATION_PARAMS, SHIPPING_FEE_PARAMS, enabledCouriers, readRateQuery } from './request.js';
export { courierView, estimationView, shippingFeeView } from './views.js';
