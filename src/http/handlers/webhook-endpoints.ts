import { Conflict, NotFound, RuleViolation } from '../../shared/index.js';
import { clientOf, json, type HandlerMap, type OperationInput } from '../handler.js';
import { listenerTakesNoUrl, RESUME_SLICE, takesDeliveries, webhookMessages, isSecret, webhookEndpointView, type EndpointPatch } from '../../webhooks/index.js';
import type { Endpoint } from '../../webhooks/index.js';
import { DEFAULT_ENDPOINT, SANDBOX_EVENT_TYPES, type FieldError } from '../../records/index.js';
import type { Clocks } from '../../clock/index.js';
import type { SettingsWriter } from '../../store/index.js';
import type { Refusal, TargetGuard, WebhookDispatcher, WebhookEndpoints } from '../../webhooks/index.js';

/** What the endpoint handlers work with. */
export interface EndpointHandlerDeps {
  clock: Clocks;
  endpoints: WebhookEndpoints;
  /** Runs each change of the client's endpoints (with the held deliveries it resumes) as one unit of its settings. */
  settings: SettingsWriter;
  dispatcher: WebhookDispatcher;
  /** The webhook target policy, checked on every URL set here. */
  targets: TargetGuard;
  /** Whether a listener of the client is connected (this replica's; on PostgreSQL a best effort across replicas). */
  connected?: (clientId: string, name: string) => Promise<boolean>;
}

/** What a create or a change may carry; the spec has checked the types. */
type EndpointBody = EndpointPatch & { events?: string[] | null };

/** The problems of a create or change the spec cannot see: the target policy, a secret's length, unknown events. */
function problemsOf(body: EndpointBody, refusal: Refusal | undefined): FieldError[] {
  const problems: FieldError[] = [];
  if (refusal) problems.push({ field: 'url', message: webhookMessages.targetRefused(refusal) });
  if (body.secret !== undefined && !isSecret(body.secret)) problems.push({ field: 'secret', message: webhookMessages.secret });
  (body.events ?? []).forEach((event, i) => {
    if (!(SANDBOX_EVENT_TYPES as readonly string[]).includes(event)) problems.push({ field: `events[${i}]`, message: webhookMessages.unknownEvent(event) });
  });
  if (body.secret !== undefined && body.rotate_secret) problems.push({ field: 'rotate_secret', message: webhookMessages.secretTwice });
  return problems;
}

/** Rejects a body with problems, naming each field; nothing is changed. */
function check(body: EndpointBody, targets: TargetGuard): void {
  const refusal = body.url === undefined ? undefined : targets.checkUrl(body.url);
  const problems = problemsOf(body, refusal);
  if (problems.length === 0) return;
  throw new RuleViolation(problems, refusal ? webhookMessages.targetPolicy(refusal) : undefined);
}

/**
 * The endpoints part of the control API: a client's endpoints listed, created, read,
 * changed and deleted. The default endpoint is one of them (`default`), the one
 * `PUT /__sandbox/webhook` sets.
 */
export function webhookEndpointHandlers({ clock, endpoints, settings, dispatcher, targets, connected }: EndpointHandlerDeps): HandlerMap {
  const show = async (status: number, endpoint: Endpoint, input: OperationInput) => {
    const client = clientOf(input);
    const live = endpoint.listener !== null && connected ? await connected(client.id, endpoint.listener) : false;
    return json(status, webhookEndpointView(endpoint, { maskSecret: input.role === 'read_only', connected: live, now: clock.of(client.id) }));
  };
  const idOf = (input: OperationInput): string => input.params.endpoint_id!;

  return {
    listWebhookEndpoints: async (input) => {
      const client = clientOf(input);
      const list = await endpoints.list(client);
      const live = await Promise.all(list.map((e) => (e.listener !== null && connected ? connected(client.id, e.listener) : false)));
      const now = clock.of(client.id);
      return json(200, { endpoints: list.map((e, i) => webhookEndpointView(e, { maskSecret: input.role === 'read_only', connected: live[i]!, now })) });
    },

    createWebhookEndpoint: async (input) => {
      const client = clientOf(input);
      const body = input.body as EndpointBody & { url: string };
      check(body, targets);
      const created = await settings.unit(client.id, (tx) => endpoints.create(client, body, clock.of(client.id), tx));
      return show(201, created, input);
    },

    getWebhookEndpoint: async (input) => {
      const found = await endpoints.get(clientOf(input), idOf(input));
      if (!found) throw new NotFound(webhookMessages.noEndpoint(idOf(input)));
      return show(200, found, input);
    },

    updateWebhookEndpoint: async (input) => {
      const client = clientOf(input);
      const id = idOf(input);
      const body = input.body as EndpointBody;
      // A URL for a listener endpoint is refused as such, whatever the target policy would say of it.
      if (body.url !== undefined && (await endpoints.get(client, id))?.listener != null) throw listenerTakesNoUrl();
      check(body, targets);
      // The default endpoint set or enabled again takes its held deliveries, as PUT /__sandbox/webhook does.
      const resumes = id === DEFAULT_ENDPOINT && (body.url !== undefined || body.enabled === true);
      const { changed, more } = await settings.unit(client.id, async (tx) => {
        const after = await endpoints.update(client, id, body, clock.of(client.id), tx);
        return { changed: after, more: resumes && takesDeliveries(after ?? undefined) ? (await dispatcher.resumePaused(tx, client.id)) === RESUME_SLICE : false };
      });
      if (!changed) throw new NotFound(webhookMessages.noEndpoint(id));
      if (more) await dispatcher.resumeAllPaused(client.id);
      return show(200, changed, input);
    },

    deleteWebhookEndpoint: async (input) => {
      const client = clientOf(input);
      const id = idOf(input);
      if (id === DEFAULT_ENDPOINT) throw new Conflict(webhookMessages.defaultKept);
      const removed = await settings.unit(client.id, (tx) => endpoints.delete(client, id, tx));
      // What it held (a listener's while it was not connected) fails, as a deleted endpoint's deliveries do: held, they would
      // fill the client's outbox for good. Also when it was deleted already: a delete whose failing was cut short (the store
      // away) is finished by the same DELETE sent again, answered 404.
      await dispatcher.failHeld(client.id, id, webhookMessages.endpointGone(id));
      if (!removed) throw new NotFound(webhookMessages.noEndpoint(id));
      return json(200, { success: true, removed: 1 });
    },
  };
}
