import { Conflict, NotFound, RuleViolation } from '../domain/errors.js';
import { clientOf, json, type HandlerMap, type Interceptor, type OperationInput } from '../http/handler.js';
import type { Clock } from '../clock/clock.js';
import { chaosHeaderModes, unknownChaos } from './chaos.js';
import type { DeliveryFilter, DeliveryLog } from './deliveries.js';
import type { WebhookDispatcher } from './dispatcher.js';
import type { Endpoint, WebhookEndpoints } from './endpoints.js';
import { webhookMessages } from './messages.js';
import { isSecret } from './secret.js';
import type { ChaosMode, Delivery } from './types.js';
import { deliveryView, endpointView } from './views.js';

export interface WebhookHandlerDeps {
  clock: Clock;
  endpoints: WebhookEndpoints;
  log: DeliveryLog;
  dispatcher: WebhookDispatcher;
  retries: number[];
  timeoutMs: number;
}

const withUrl = (endpoint: Endpoint): Endpoint & { url: string } => {
  if (!endpoint.url) throw new Conflict(webhookMessages.noUrl);
  return { ...endpoint, url: endpoint.url };
};

/** The webhook part of the control API: endpoint, delivery log, redeliver, test ping. */
export function webhookHandlers({ clock, endpoints, log, dispatcher, retries, timeoutMs }: WebhookHandlerDeps): HandlerMap {
  const ownDelivery = (input: OperationInput): Delivery => {
    const delivery = log.get(clientOf(input).id, input.params.delivery_id!);
    if (!delivery) throw new NotFound();
    return delivery;
  };
  const showEndpoint = (status: number, endpoint: Endpoint) => json(status, endpointView(endpoint, retries, timeoutMs));

  return {
    getWebhook: (input) => showEndpoint(200, endpoints.of(clientOf(input))),

    setWebhook: (input) => {
      const client = clientOf(input);
      const body = input.body as { url: string; secret?: string; chaos?: string[] };
      if (body.secret !== undefined && !isSecret(body.secret)) throw new RuleViolation([{ field: 'secret', message: webhookMessages.secret }]);
      const endpoint = endpoints.set(client, { url: body.url, secret: body.secret, chaos: body.chaos as ChaosMode[] | undefined }, clock.now());
      dispatcher.resumePaused(client.id);
      return showEndpoint(200, endpoint);
    },

    listWebhookDeliveries: (input) => {
      const filter = input.query as DeliveryFilter & { limit?: number };
      const all = log.list(clientOf(input).id, filter);
      return json(200, { total: all.length, deliveries: all.slice(0, filter.limit ?? 100).map(deliveryView) });
    },

    getWebhookDelivery: (input) => json(200, deliveryView(ownDelivery(input))),

    redeliverWebhook: async (input) => {
      const delivery = ownDelivery(input);
      const endpoint = withUrl(endpoints.of(clientOf(input)));
      if (!endpoint.enabled) throw new Conflict(webhookMessages.disabled(endpoint.disabled_reason));
      await dispatcher.redeliver(delivery, endpoint);
      return json(200, deliveryView(delivery));
    },

    testWebhook: async (input) => {
      const client = clientOf(input);
      const delivery = await dispatcher.ping(client.id, withUrl(endpoints.of(client)));
      return json(200, deliveryView(delivery));
    },
  };
}

/** Rejects an `X-Sandbox-Webhook-Chaos` header that names an unknown mode, naming the header. */
export const chaosHeaderCheck: Interceptor = (input, next) => {
  const header = input.headers['x-sandbox-webhook-chaos'];
  if (input.operation.operationId === 'createOrder' && header !== undefined) {
    const unknown = unknownChaos(chaosHeaderModes(header) ?? []);
    if (unknown.length > 0) throw new RuleViolation([{ field: 'header.x-sandbox-webhook-chaos', message: webhookMessages.chaos(unknown) }], webhookMessages.chaosHeader);
  }
  return next();
};
