import { NotFound } from '../../shared/index.js';
import { clientOf, json, type HandlerMap } from '../handler.js';
import type { Clocks } from '../../clock/index.js';
import type { EventSink } from '../../events/index.js';
import type { Fixtures } from '../../fixtures/index.js';
import type { IdFactory } from '../../ids/index.js';
import type { OrdersService } from '../../orders/index.js';
import type { Storage } from '../../store/index.js';
import type { Journey } from '../../tracking/index.js';
import { cancelMessages, cancelOrder, orderDetail } from '../../orders/index.js';
import type { Order } from '../../records/index.js';

interface Deps {
  storage: Storage;
  orders: OrdersService;
  fixtures: Fixtures;
  journey: Journey;
  clock: Clocks;
  events: EventSink;
  ids: IdFactory;
}

/** Cancel and detail: the order operations the provider names but does not document (`x-sandbox-assumed`). */
export function assumedOrderHandlers({ storage, orders, fixtures, journey, clock, events, ids }: Deps): HandlerMap {
  const detail = (order: Order) => orderDetail(fixtures, order, journey.history(order));
  return {
    getOrderDetail: async (input) => {
      const order = await orders.get(clientOf(input), input.params.order_no!);
      if (!order) throw new NotFound();
      return json(200, { success: true, data: detail(order) });
    },

    cancelOrder: async (input) => {
      const body = input.body as { order_no: string; reason?: string };
      const order = await cancelOrder({ storage, journey, clock, events, fixtures, seed: ids.seed }, clientOf(input), body.order_no, body.reason);
      if (!order) throw new NotFound();
      return json(200, { success: true, message: cancelMessages.cancelled(order.order_no), data: detail(order) });
    },
  };
}
