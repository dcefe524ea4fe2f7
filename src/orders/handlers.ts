import { NotFound } from '../domain/errors.js';
import { clientOf, json, type HandlerMap, type Reply } from '../http/handler.js';
import type { Services } from '../services.js';
import { chaosHeaderModes } from '../webhooks/chaos.js';
import { magicHistory, magicScenario, trackingOf } from '../tracking/view.js';
import type { CreateOrderRequest, Order } from './types.js';

export const CREATED_MESSAGE =
  'Data saved successfully. The waybill number (AWB) will be created shortly and sent to your webhook.';


/** The provider's documented operations. */
export function orderHandlers({ orders, fixtures, clock, journey }: Services): HandlerMap {
  // Tracking is read far more often than it changes: keep each order's last answer,
  // serialized, until a step is played or it is asked for through another host.
  const answers = new WeakMap<Order, { key: string; reply: Reply }>();
  const trackingAnswer = (order: Order, baseUrl: string): Reply | undefined => {
    const key = `${order.history.length}|${baseUrl}`;
    const cached = answers.get(order);
    if (cached?.key === key) return cached.reply;
    const tracking = trackingOf(journey.history(order), baseUrl);
    if (!tracking) return undefined;
    const reply: Reply = { status: 200, body: tracking, serialized: JSON.stringify(tracking) };
    answers.set(order, { key, reply });
    return reply;
  };
  return {
    createOrder: (input) => {
      const scenario = input.headers['x-sandbox-scenario'];
      const created = orders.create(clientOf(input), input.body as CreateOrderRequest, {
        scenario: typeof scenario === 'string' ? scenario : undefined,
        webhookChaos: chaosHeaderModes(input.headers['x-sandbox-webhook-chaos']),
      });
      return json(201, { success: true, message: CREATED_MESSAGE, ...created });
    },

    trackOrder: (input) => {
      const awb = input.params.order_no!;
      const magic = magicScenario(fixtures, awb);
      if (magic?.awb === 'fails') throw new NotFound();
      if (magic) {
        const tracking = trackingOf(magicHistory(fixtures, magic, clock.now()), input.baseUrl);
        return json(200, tracking);
      }
      const order = orders.byAwbOf(clientOf(input), awb);
      const answer = order && trackingAnswer(order, input.baseUrl);
      if (!answer) throw new NotFound();
      return answer;
    },
  };
}
