import { parseDuration } from '../config/duration.js';
import type { SandboxModule } from '../module.js';
import type { Services } from '../services.js';
import { unknownChaos } from './chaos.js';
import { DeliveryLog } from './deliveries.js';
import { WebhookDispatcher } from './dispatcher.js';
import { WebhookEndpoints } from './endpoints.js';
import { chaosHeaderCheck, webhookHandlers } from './handlers.js';
import { parseRetries } from './retry.js';
import { isSecret } from './secret.js';

/** Checks the webhook options and the clients' webhook settings; throws a message naming the one at fault. */
function checkSettings(services: Services): { retries: number[]; timeoutMs: number } {
  const { options, registry } = services;
  const retries = parseRetries(options.webhookRetries);
  if (!retries) throw new Error(`webhookRetries "${options.webhookRetries}" is not a retry schedule: use delays such as 0,5s,30s,2m.`);
  const timeoutMs = parseDuration(options.webhookTimeout);
  if (!timeoutMs) throw new Error(`webhookTimeout "${options.webhookTimeout}" is not a duration above 0: use e.g. 10s or 500ms.`);
  if (options.webhookSecret !== undefined && !isSecret(options.webhookSecret)) {
    throw new Error('webhookSecret must be "whsec_" followed by the base64 of 24 to 64 bytes.');
  }
  for (const client of registry.clients) {
    const { secret, chaos = [] } = client.webhook ?? {};
    if (secret !== undefined && !isSecret(secret)) throw new Error(`The webhook.secret of client ${client.id} must be "whsec_" followed by the base64 of 24 to 64 bytes.`);
    const unknown = unknownChaos(chaos);
    if (unknown.length > 0) throw new Error(`The webhook.chaos of client ${client.id} names unknown modes: ${unknown.join(', ')}.`);
  }
  return { retries, timeoutMs };
}

/**
 * Webhook delivery: the outbox fed by order events, the signed and retried
 * dispatcher, the delivery log and the endpoint settings in the control API.
 *
 * @example sandboxModules = (services) => [webhooksModule(services)]
 */
export function webhooksModule(services: Services): SandboxModule {
  const { store, scheduler, clock, registry, logger, events, options, ids } = services;
  const { retries, timeoutMs } = checkSettings(services);
  const endpoints = new WebhookEndpoints(store, options);
  const log = new DeliveryLog(store, ids.seed);
  const dispatcher = new WebhookDispatcher({ store, scheduler, clock, registry, endpoints, log, retries, timeoutMs, outboxSize: options.outboxSize, logger });
  events.subscribe((event) => {
    try {
      dispatcher.enqueue(event);
    } catch (err) {
      logger.error({ err, event: event.type, order: event.order.order_no }, 'webhook outbox failed');
    }
  });
  return {
    name: 'webhooks',
    handlers: webhookHandlers({ clock, endpoints, log, dispatcher, retries, timeoutMs }),
    providerInterceptors: [chaosHeaderCheck],
    reset: (clientId) => dispatcher.removeAll(clientId) + endpoints.remove(clientId),
    prune: (olderThan) => dispatcher.prune(olderThan),
    start: () => {
      for (const client of registry.clients) endpoints.of(client);
      dispatcher.resume();
      store.commit();
    },
    close: () => dispatcher.close(),
  };
}
