import { Conflict, domainMessages, NotFound, RuleViolation } from '../../shared/index.js';
import type { SettingsWriter, Storage } from '../../store/index.js';
import { clientOf, json, listInParts, type HandlerMap, type Interceptor, type OperationInput } from '../handler.js';
import type { Clocks } from '../../clock/index.js';
import { chaosHeaderModes, unknownChaos, MAX_REDELIVERED_ATTEMPTS, RESUME_SLICE, type WebhookDispatcher, webhookMessages, isSecret, deliveryView, endpointView, endpointOf } from '../../webhooks/index.js';
import type { Endpoint, WebhookEndpoints, TargetGuard } from '../../webhooks/index.js';
import { DEFAULT_ENDPOINT, type ChaosMode, type Delivery, type DeliveryStatus, type WebhookEventType, type Stored } from '../../records/index.js';
import { webhookEndpointHandlers } from './webhook-endpoints.js';
import type { CursorSeal } from '../sealed-cursor.js';

export interface WebhookHandlerDeps {
  storage: Storage;
  clock: Clocks;
  endpoints: WebhookEndpoints;
  /** Runs the endpoint's change with the paused deliveries it resumes, one unit of the client's settings. */
  settings: SettingsWriter;
  dispatcher: WebhookDispatcher;
  retries: number[];
  timeoutMs: number;
  /** The webhook target policy, checked on every URL set here. */
  targets: TargetGuard;
  /** Whether a listener of the client is connected (the endpoint listing shows it). */
  connected?: (clientId: string, name: string) => Promise<boolean>;
  /** Seals the delivery log's cursors (they page by a rank all clients share). */
  cursors: CursorSeal;
}

const withUrl = (endpoint: Endpoint): Endpoint & { url: string } => {
  if (!endpoint.url) throw new Conflict(webhookMessages.noUrl);
  return { ...endpoint, url: endpoint.url };
};

/** The webhook part of the control API: endpoint, delivery log, redeliver, test ping. */
export function webhookHandlers({ storage, clock, endpoints, settings, dispatcher, retries, timeoutMs, targets, connected, cursors }: WebhookHandlerDeps): HandlerMap {
  const ownDelivery = async (input: OperationInput): Promise<Stored<Delivery>> => {
    const delivery = await storage.deliveries.get(input.params.delivery_id!);
    if (delivery?.client_id !== clientOf(input).id) throw new NotFound(domainMessages.deliveryNotFound(input.params.delivery_id!));
    return delivery;
  };
  const showEndpoint = (status: number, endpoint: Endpoint, input?: OperationInput) =>
    json(status, endpointView(endpoint, retries, timeoutMs, input?.role === 'read_only'));

  return {
    ...webhookEndpointHandlers({ clock, endpoints, settings, dispatcher, targets, ...(connected ? { connected } : {}) }),
    getWebhook: async (input) => showEndpoint(200, await endpoints.of(clientOf(input)), input),

    setWebhook: async (input) => {
      const client = clientOf(input);
      const body = input.body as { url: string; secret?: string; chaos?: string[] };
      const refusal = targets.checkUrl(body.url);
      if (refusal) throw new RuleViolation([{ field: 'url', message: webhookMessages.targetRefused(refusal) }], webhookMessages.targetPolicy(refusal));
      if (body.secret !== undefined && !isSecret(body.secret)) throw new RuleViolation([{ field: 'secret', message: webhookMessages.secret }]);
      // Run again whole when it meets another change of the client's settings (a fault rule's count, a clock save).
      const { endpoint, more } = await settings.unit(client.id, async (tx) => {
        const set = await endpoints.set(client, { url: body.url, secret: body.secret, chaos: body.chaos as ChaosMode[] | undefined }, clock.of(client.id), tx);
        return { endpoint: set, more: (await dispatcher.resumePaused(tx, client.id)) === RESUME_SLICE };
      });
      // The rest a slice at a time (a restart resumes what a crash left paused meanwhile).
      if (more) await dispatcher.resumeAllPaused(client.id);
      return showEndpoint(200, endpoint);
    },

    listWebhookDeliveries: async (input) => {
      const { status, ...query } = input.query as { order_no?: string; status?: DeliveryStatus | 'queued'; event?: WebhookEventType; endpoint_id?: string; limit?: number; cursor?: string };
      const client = clientOf(input);
      const now = clock.of(client.id);
      // `queued` and `pending` are both stored pending: the one due by now, the other not yet.
      const byStatus = status === 'queued' ? { status: 'pending' as const, dueBy: now } : status === 'pending' ? { status, dueAfter: now } : { status };
      const cursor = query.cursor === undefined ? undefined : cursors.open(query.cursor, client.id);
      const page = await storage.deliveries.list(client.id, { ...query, cursor, ...byStatus, limit: query.limit ?? 100, ...(input.between ? { between: input.between } : {}) });
      const next_cursor = page.next_cursor === null ? null : cursors.seal(page.next_cursor, client.id);
      // Written in parts: a page of deliveries with 50 attempts each is megabytes (see listInParts).
      return listInParts({ total: page.total, next_cursor }, 'deliveries', page.items, (d) => deliveryView(d, now), input.turn);
    },

    getWebhookDelivery: async (input) => json(200, deliveryView(await ownDelivery(input), clock.of(clientOf(input).id))),

    redeliverWebhook: async (input) => {
      const delivery = await ownDelivery(input);
      // To the endpoint it went to: the default one, or another while it exists.
      const to = await endpoints.get(clientOf(input), endpointOf(delivery));
      if (!to) throw new Conflict(webhookMessages.endpointGone(endpointOf(delivery)));
      // A listener's redelivery goes through its connection (409 while it is not connected).
      const endpoint = to.listener !== null ? to : withUrl(to);
      if (!endpoint.enabled) throw new Conflict(to.id === DEFAULT_ENDPOINT ? webhookMessages.disabled(endpoint.disabled_reason) : webhookMessages.endpointDisabled(to.id, to.disabled_reason));
      if (delivery.attempts.length >= MAX_REDELIVERED_ATTEMPTS) throw new Conflict(webhookMessages.tooManyAttempts(MAX_REDELIVERED_ATTEMPTS));
      const done = await dispatcher.redeliver(delivery, endpoint);
      return json(200, deliveryView(done, clock.of(done.client_id)));
    },

    testWebhook: async (input) => {
      const client = clientOf(input);
      const endpoint = withUrl(await endpoints.of(client));
      // As a redelivery: a disabled endpoint (a 410 Gone, or switched off) takes nothing until it is enabled again.
      if (!endpoint.enabled) throw new Conflict(webhookMessages.disabled(endpoint.disabled_reason));
      const delivery = await dispatcher.ping(client.id, endpoint);
      return json(200, deliveryView(delivery, clock.of(client.id)));
    },
  };
}

/** Throws the 400 of a create's `X-Sandbox-Webhook-Chaos` header that names an unknown mode, naming the header. */
export function checkChaosHeader(input: OperationInput): void {
  const header = input.headers['x-sandbox-webhook-chaos'];
  if (input.operation.operationId !== 'createOrder' || header === undefined) return;
  const unknown = unknownChaos(chaosHeaderModes(header) ?? []);
  if (unknown.length > 0) throw new RuleViolation([{ field: 'header.x-sandbox-webhook-chaos', message: webhookMessages.chaos(unknown) }], webhookMessages.chaosHeader);
}

/** Rejects an `X-Sandbox-Webhook-Chaos` header that names an unknown mode (checkChaosHeader). */
export const chaosHeaderCheck: Interceptor = (input, next) => {
  checkChaosHeader(input);
  return next();
};
