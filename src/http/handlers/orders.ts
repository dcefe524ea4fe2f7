import { NotFound } from '../../shared/index.js';
import { clientOf, json, type BodyReply, type HandlerMap } from '../handler.js';
import type { Clocks } from '../../clock/index.js';
import type { Fixtures } from '../../fixtures/index.js';
import type { OrdersService } from '../../orders/index.js';
import type { Journey } from '../../tracking/index.js';
import { chaosHeaderModes } from '../../webhooks/index.js';
import { magicHistory, magicScenario, trackingOf } from '../../tracking/index.js';
import type { Stored } from '../../store/index.js';
import type { CreateOrderRequest, Order } from '../../records/index.js';

export const CREATED_MESSAGE =
  'Data saved successfully. The waybill number (AWB) will be created shortly and sent to your webhook.';

/** How many serialized tracking answers are kept. */
const TRACKING_CACHE_SIZE = 10_000;

/** The provider's documented operations. */
export function orderHandlers({ orders, fixtures, clock, journey }: { orders: OrdersService; fixtures: Fixtures; clock: Clocks; journey: Journey }): HandlerMap {
  // Tracking is read far more often than it changes: keep recent answers, serialized,
  // by order version and host (a bounded map: insertion order is the eviction order).
  const answers = new Map<string, BodyReply>();
  const trackingAnswer = (order: Stored<Order>, baseUrl: string): BodyReply | undefined => {
    const key = `${order.order_no}|${order.version}|${baseUrl}`;
    const cached = answers.get(key);
    if (cached) return cached;
    const tracking = trackingOf(journey.history(order), baseUrl, journey.photos);
    if (!tracking) return undefined;
    const reply: BodyReply = { status: 200, body: tracking, serialized: JSON.stringify(tracking) };
    if (answers.size >= TRACKING_CACHE_SIZE) answers.delete(answers.keys().next().value!);
    answers.set(key, reply);
    return reply;
  };
  return {
    createOrder: async (input) => {
      const scenario = input.headers['x-sandbox-scenario'];
      const created = await orders.create(clientOf(input), input.body as CreateOrderRequest, {
        scenario: typeof scenario === 'string' ? scenario : undefined,
        webhookChaos: chaosHeaderModes(input.headers['x-sandbox-webhook-chaos']),
      });
      return json(201, { success: true, message: CREATED_MESSAGE, ...created });
    },

    trackOrder: async (input) => {
      const awb = input.params.order_no!;
      const magic = magicScenario(fixtures, awb);
      if (magic?.awb === 'fails') throw new NotFound();
      if (magic) {
        const tracking = trackingOf(magicHistory(fixtures, magic, clock.of(clientOf(input).id)), input.baseUrl, journey.photos);
        return json(200, tracking);
      }
      const order = await orders.byAwbOf(clientOf(input), awb);
      const answer = order && trackingAnswer(order, input.baseUrl);
      if (!answer) throw new NotFound();
      return answer;
    },
  };
}
