import type { Fixtures } from '../../fixtures/index.js';
import { clientOf, json, type HandlerMap } from '../handler.js';
import { quoteCourier, ESTIMATION_PARAMS, enabledCouriers, readRateQuery, SHIPPING_FEE_PARAMS, courierView, estimationView, shippingFeeView } from '../../rates/index.js';

/** List of couriers, shipping fee and estimation rates (the SSE stream is in rates-stream.ts). */
export function rateHandlers(fixtures: Fixtures): HandlerMap {
  return {
    listCouriers: (input) => json(200, { success: true, data: enabledCouriers(fixtures, clientOf(input)).map(courierView) }),

    getShippingFee: (input) => {
      const { request, couriers } = readRateQuery(fixtures, clientOf(input), input.query, SHIPPING_FEE_PARAMS);
      return json(200, { success: true, data: shippingFeeView(request, couriers.map((c) => quoteCourier(c, request))) });
    },

    getEstimationRates: (input) => {
      const { request, couriers } = readRateQuery(fixtures, clientOf(input), input.query, ESTIMATION_PARAMS);
      return json(200, { success: true, data: estimationView(couriers.map((c) => quoteCourier(c, request))) });
    },
  };
}
