import { notFound } from '../http/errors.js';
import { clientOf, json, type HandlerMap } from '../http/handler.js';
import type { Services } from '../services.js';
import { magicHistory, magicScenario, trackingOf } from '../tracking/view.js';
import type { CreateOrderRequest } from './types.js';

export const CREATED_MESSAGE =
  'Data saved successfully. The waybill number (AWB) will be created shortly and sent to your webhook.';

const headerList = (value: string | string[] | undefined): string[] | undefined =>
  value === undefined ? undefined : String(value).split(',').map((s) => s.trim()).filter(Boolean);

/** The provider's documented operations. */
export function orderHandlers({ orders, fixtures, clock, journey }: Services): HandlerMap {
  return {
    createOrder: (input) => {
      const scenario = input.headers['x-sandbox-scenario'];
      const created = orders.create(clientOf(input), input.body as CreateOrderRequest, {
        scenario: typeof scenario === 'string' ? scenario : undefined,
        webhookChaos: headerList(input.headers['x-sandbox-webhook-chaos']),
      });
      return json(201, { success: true, message: CREATED_MESSAGE, ...created });
    },

    trackOrder: (input) => {
      const awb = input.params.order_no!;
      const magic = magicScenario(fixtures, awb);
      if (magic?.awb === 'fails') throw notFound();
      const order = magic ? undefined : orders.byAwbOf(clientOf(input), awb);
      const history = magic ? magicHistory(fixtures, magic, clock.now()) : order && journey.history(order);
      const tracking = history && trackingOf(history, input.baseUrl);
      if (!tracking) throw notFound();
      return json(200, tracking);
    },
  };
}
