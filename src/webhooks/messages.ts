import { JobCannotRun } from '../jobs/index.js';
import { domainMessages } from '../shared/index.js';
import { SANDBOX_EVENT_TYPES } from '../records/index.js';
import { CHAOS_MODES } from './chaos.js';
import type { Refusal } from './targets.js';

/** An attempt to a listener that is not connected: nothing was attempted (the dispatcher holds the delivery; a redelivery answers 409). */
export class ListenerNotConnected extends Error {
  override name = 'ListenerNotConnected';
  constructor(readonly listener: string) {
    super(webhookMessages.listenerAway(listener));
  }
}

/** Every message of the webhook control API, in one place. */
export const webhookMessages = {
  /** A job of a client not configured here: `cannot` says what of it was not done (one of the two below). */
  unknownClient: (clientId: string, cannot: string) =>
    `Client "${clientId}" is not configured on this sandbox, so ${cannot}; the job is tried again later (on a shared database, every replica needs the same clients: --token, --config, SANDBOX_TOKENS).`,
  /** The event is saved with the change of the order that made it (an AWB, a cancel): neither is, when it fails. */
  orderNotChanged: (orderNo: string, event: string) => `the job that changes its order ${orderNo} (making its ${event} event and webhooks) cannot run here: nothing of it was saved`,
  attemptNotMade: (deliveryId: string) => `its webhook delivery ${deliveryId} cannot be attempted here`,
  clientUnconfigured:
    'the sandbox dropped its attempt: its client was not configured on the sandbox when it fell due (a client removed from --config, or renamed); with the client back, POST /__sandbox/webhooks/recover sends it again',
  attemptsDropped:
    'the sandbox could not make its attempts (5 tries over 15 minutes of the client\'s clock; its log says why: "scheduled job failed"); POST /__sandbox/webhooks/recover sends it again',
  tooManyManualAttempts: (max: number) => `This client already has ${max} test pings and redeliveries in flight, the most it may at once; retry once one has ended.`,
  tooManyAttempts: (max: number) =>
    `This delivery has had ${max} attempts, the most one may have with redeliveries: its log would grow with every one. Send a new test ping (POST /__sandbox/webhooks/test), or create an order for a new delivery.`,
  noUrl: 'No webhook URL is set for this client: set one with PUT /__sandbox/webhook {"url": "..."} (or start with --webhook-url, or give webhook.url in the config file).',
  disabled: (reason: string | null) => `The webhook endpoint of this client is disabled (${reason ?? 'no reason'}); PUT /__sandbox/webhook enables it again.`,
  secret: domainMessages.webhookSecret,
  chaos: (unknown: string[]) => `unknown chaos mode ${unknown.map((m) => `"${m}"`).join(', ')}; use any of ${CHAOS_MODES.join(', ')}, comma-separated`,
  outboxFull: (size: number) =>
    `Outbox full: this client already has ${size} deliveries held for want of a webhook URL or a live endpoint (--outbox-size), so this one was not kept for later. Set the webhook URL (or enable the endpoint again, or connect the listener), then redeliver it (POST /__sandbox/webhooks/deliveries/{id}/redeliver).`,
  targetRefused: (refusal: Refusal) => `refused by webhook target policy (rule ${refusal.rule}): ${refusal.message}`,
  /** The 400's summary: a URL no policy admits (its scheme, credentials or port 0) is told so, not sent to the operator's policy. */
  targetPolicy: (refusal: Refusal) =>
    ['scheme', 'credentials', 'port'].includes(refusal.rule)
      ? 'The webhook URL cannot be sent to under any webhook target policy: use an absolute http(s) URL without credentials, on a port from 1 to 65535.'
      : 'The webhook URL is refused by the sandbox\'s webhook target policy (--webhook-targets): use a public http(s) URL without credentials, or one the operator allows.',
  tooManyEndpoints: (max: number, listeners: number) =>
    `This client already has ${max} endpoints besides its default one, the most it may have${listeners > 0 ? `, ${listeners} of them listeners (kept for --listener-expiry after their listen stops)` : ''}; delete one first (DELETE /__sandbox/webhooks/endpoints/{endpoint_id}).`,
  noEndpoint: (id: string) => `This client has no webhook endpoint "${id}"; GET /__sandbox/webhooks/endpoints lists its endpoints.`,
  defaultKept: 'The default endpoint always exists: disable it ({"enabled": false}) or change its URL instead.',
  endpointGone: (id: string) => `The endpoint ${id} this delivery went to was deleted.`,
  endpointDisabled: (id: string, reason: string | null) => `The endpoint ${id} is disabled (${reason ?? 'no reason'}); PATCH /__sandbox/webhooks/endpoints/${id} {"enabled": true} enables it again.`,
  noEndpointUrl: (id: string) => `The endpoint ${id} has no URL to send to.`,
  unknownEvent: (event: string) => `unknown event "${event}"; an endpoint may take ${SANDBOX_EVENT_TYPES.join(', ')} (null or no filter: every event)`,
  secretTwice: 'give either secret or rotate_secret, not both',
  listenerAway: (name: string) => `listener ${name} is not connected`,
  listenerExpired: (name: string, since: number | null) => `listener ${name} not seen since ${since === null ? 'it was created' : new Date(since).toISOString()}; its endpoint was removed`,
  tooManyListeners: (max: number) => `This client already has ${max} listeners, the most it may have; a stopped listener counts until --listener-expiry removes it, so connect under one of their names, or delete one's endpoint (DELETE /__sandbox/webhooks/endpoints/{endpoint_id}).`,
  chaosHeader: 'The X-Sandbox-Webhook-Chaos header names an unknown chaos mode.',
} as const;

/**
 * Fails the job of a client this sandbox does not know (a replica started with a clients
 * config that differs) rather than drop its webhooks: another replica may run it. `cannot`
 * says what of the job was not done.
 */
export function unknownClient(clientId: string, cannot: string): never {
  throw new JobCannotRun(webhookMessages.unknownClient(clientId, cannot));
}
