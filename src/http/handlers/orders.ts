import { NotFound } from '../../shared/index.js';
import { clientOf, json, type HandlerMap } from '../handler.js';
import type { OrdersService } from '../../orders/index.js';
import type { TrackingAnswers } from '../../tracking/index.js';
import { chaosHeaderModes } from '../../webhooks/index.js';
import type { CreateOrderRequest } from '../../records/index.js';

export const CREATED_MESSAGE =
  'Data saved successfully. The waybill number (AWB) will be created shortly and sent to your webhook.';

/** The provider's documented operations. */
export function orderHandlers({ orders, tracking }: { orders: OrdersService; tracking: TrackingAnswers }): HandlerMap {
  return {
    createOrder: async (input) => {
      const scenario = input.headers['x-sandbox-scenario'];
      const created = await orders.create(clientOf(input), input.body as CreateOrderRequest, {
        scenario: typeof scenario === 'string' ? scenario : undefined,
        webhookChaos: chaosHeaderModes(input.headers['x-sandbox-webhook-chaos']),
      });
      input.createdOrders = created.order_numbers;
      return json(201, { success: true, message: CREATED_MESSAGE, ...created });
    },

    trackOrder: async (input) => {
      const awb = input.params.order_no!;
      const magic = tracking.magicScenario(awb);
      if (magic) input.magicAwb = true;
      if (magic?.awb === 'fails') throw new NotFound();
      if (magic) {
        // A scenario whose steps carry no status has no tracking to show, as an order before its first scan.
        const shown = tracking.magic(magic, clientOf(input).id, input.baseUrl);
        if (!shown) throw new NotFound();
        return json(200, shown);
      }
      const order = await orders.byAwbOf(clientOf(input), awb);
      const answer = order && tracking.of(order, input.baseUrl);
      if (order) input.answeredOrder = { order_no: order.order_no, version: order.version, ended: order.next_step === null && order.history.length > 0 };
      if (!answer) throw new NotFound();
      return answer;
    },
  };
}
