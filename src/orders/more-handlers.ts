import { NotFound } from '../domain/errors.js';
import { clientOf, json, type HandlerMap, type OperationInput } from '../http/handler.js';
import type { SandboxModule } from '../module.js';
import type { Services } from '../services.js';
import { cancelMessages, cancelOrder } from './cancel.js';
import { orderDetail } from './detail.js';
import type { Order } from './types.js';

/** Cancel and detail: the order operations the provider names but does not document. */
export function orderMoreHandlers(services: Services): HandlerMap {
  const { orders, fixtures, journey } = services;
  const own = (input: OperationInput, orderNo: string): Order => {
    const order = orders.get(clientOf(input), orderNo);
    if (!order) throw new NotFound();
    return order;
  };
  const detail = (order: Order) => orderDetail(fixtures, order, journey.history(order));
  return {
    getOrderDetail: (input) => json(200, { success: true, data: detail(own(input, input.params.order_no!)) }),

    cancelOrder: (input) => {
      const body = input.body as { order_no: string; reason?: string };
      const order = own(input, body.order_no);
      cancelOrder({ ...services, seed: services.ids.seed }, clientOf(input), order, body.reason);
      return json(200, { success: true, message: cancelMessages.cancelled(order.order_no), data: detail(order) });
    },
  };
}

/** The module of cancel and detail. */
export function orderMoreModule(services: Services): SandboxModule {
  return { name: 'order-more', handlers: orderMoreHandlers(services) };
}
