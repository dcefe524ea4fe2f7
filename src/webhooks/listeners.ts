import type { Logger } from 'pino';
import type { Clocks } from '../clock/index.js';
import type { Client, ClientRegistry } from '../clients/index.js';
import type { Scheduler } from '../jobs/index.js';
import { LISTENER_NAME, SANDBOX_EVENT_TYPES, type EventFilter, type SandboxEventType } from '../records/index.js';
import { domainMessages, LimitReached, RuleViolation } from '../shared/index.js';
import type { SettingsWriter, Storage } from '../store/index.js';
import type { WebhookDispatcher } from './dispatcher.js';
import { LISTENER_EXPIRY_JOB, type Endpoint, type WebhookEndpoints } from './endpoints.js';
import { webhookMessages } from './messages.js';
import type { ListenerRelay } from './relay.js';

/** Listeners a client may have (each is one of its endpoints, within MAX_ENDPOINTS). */
export const MAX_LISTENERS = 10;
export { LISTENER_EXPIRY_JOB };

/** The query parameters a listen request takes: its name and filter, and the CLI's session and resume (a process that reconnects). */
const LISTEN_QUERY: readonly string[] = ['name', 'events', 'session', 'resume'];

/**
 * The name and filter of a listen request (each as given in the query: a repeated one is
 * refused), checked: a RuleViolation naming the field otherwise. A parameter it does not take
 * (`keys`: the query's names) is refused too, as a control call's is: a misspelt `evnts` would
 * otherwise listen for every event.
 */
export function listenRequest(names: readonly string[], eventLists: readonly string[], keys: Iterable<string> = []): { name: string; events: EventFilter | undefined } {
  const strange = [...new Set(keys)].filter((key) => !LISTEN_QUERY.includes(key));
  // A bracketed form of one it takes (`events[]`) is that one given otherwise, as a control call tells it.
  const told = (key: string) => (LISTEN_QUERY.includes(key.split('[')[0]!) ? domainMessages.givenOnce : domainMessages.notAParameter(LISTEN_QUERY));
  if (strange.length > 0) throw new RuleViolation(strange.slice(0, 100).map((key) => ({ field: key, message: told(key) })));
  if (names.length > 1) throw new RuleViolation([{ field: 'query.name', message: domainMessages.givenOnce }]);
  if (eventLists.length > 1) throw new RuleViolation([{ field: 'query.events', message: `${domainMessages.givenOnce} (one list, comma-separated)` }]);
  const [name] = names;
  const [events] = eventLists;
  if (name === undefined || !LISTENER_NAME.test(name)) {
    throw new RuleViolation([{ field: 'query.name', message: 'must be 1 to 64 characters of A-Z, a-z, 0-9, ".", "_", "@" and "-"' }]);
  }
  if (events === undefined) return { name, events: undefined };
  const list = events.split(',').map((e) => e.trim()).filter((e) => e !== '');
  const unknown = list.filter((e) => !(SANDBOX_EVENT_TYPES as readonly string[]).includes(e));
  if (unknown.length > 0) throw new RuleViolation([{ field: 'query.events', message: webhookMessages.unknownEvent(unknown[0]!) }]);
  if (list.length === 0) throw new RuleViolation([{ field: 'query.events', message: 'must name at least one event (leave it out for every event)' }]);
  return { name, events: [...new Set(list)] as SandboxEventType[] };
}

export interface ListenersDeps {
  storage: Storage;
  settings: SettingsWriter;
  endpoints: WebhookEndpoints;
  registry: ClientRegistry;
  clock: Clocks;
  dispatcher: WebhookDispatcher;
  relay: ListenerRelay;
  /** `--listener-expiry`, ms on the client's clock. */
  expiryMs: number;
  logger: Logger;
}

/**
 * Listener endpoints as the webhooks feature keeps them: opened (created or reused) when
 * a `listen` session connects under a name, seen while it stays, resumed on connect, and
 * removed with their held deliveries failed once not seen for `--listener-expiry`.
 */
export class Listeners {
  constructor(private readonly deps: ListenersDeps) {}

  /** Registers the expiry job with the scheduler. */
  attach(scheduler: Scheduler): void {
    scheduler.register({ kind: LISTENER_EXPIRY_JOB, run: (job, at) => this.expire(job.client_id, job.key, at) });
  }

  /**
   * The listener endpoint of this name, created (LimitReached past MAX_LISTENERS) or
   * reused, seen now, with its number of held deliveries.
   */
  async open(client: Client, name: string, events: EventFilter | undefined): Promise<{ endpoint: Endpoint; held: number }> {
    const { settings, endpoints, clock, storage } = this.deps;
    const endpoint = await settings.unit(client.id, async (tx) => {
      const at = clock.of(client.id);
      const list = await endpoints.list(client, tx);
      const found = list.find((e) => e.listener === name);
      if (!found && list.filter((e) => e.listener !== null).length >= MAX_LISTENERS) throw new LimitReached(webhookMessages.tooManyListeners(MAX_LISTENERS));
      const opened = found ? await endpoints.listenerSeen(client, found.id, at, tx, { events }) : await endpoints.createListener(client, name, events ?? null, at, tx);
      await tx.jobs.schedule({ kind: LISTENER_EXPIRY_JOB, key: opened!.id, client_id: client.id, due_at: at + this.deps.expiryMs });
      return opened!;
    });
    const held = (await storage.deliveries.list(client.id, { status: 'paused', endpoint_id: endpoint.id, limit: 1 })).total;
    return { endpoint, held };
  }

  /** The listener's endpoint as it stands now, or undefined when it was removed. */
  async current(clientId: string, endpointId: string): Promise<Endpoint | undefined> {
    const client = this.deps.registry.byId(clientId);
    return client && this.deps.endpoints.get(client, endpointId);
  }

  /** Whether a listener endpoint that is gone went with a reset of its client (its listener connects again) rather than a delete. */
  removedByReset(clientId: string, endpointId: string): Promise<boolean> {
    return this.deps.endpoints.removedByReset(clientId, endpointId);
  }

  /** The listener is connected (at a disconnect: was, until now): its `last_seen_at` is now. */
  async seen(clientId: string, endpointId: string): Promise<void> {
    const client = this.deps.registry.byId(clientId);
    if (!client) return;
    await this.deps.settings.unit(client.id, (tx) => this.deps.endpoints.listenerSeen(client, endpointId, this.deps.clock.of(clientId), tx));
  }

  /** Makes the listener's held deliveries due now (it connected, or is still connected). */
  resume(clientId: string, endpointId: string): Promise<number> {
    return this.deps.dispatcher.resumeEndpoint(clientId, endpointId);
  }

  /**
   * The expiry job of a listener endpoint, due: still seen within `--listener-expiry` (or
   * connected), it is looked at again then; else it is removed and its held
   * deliveries fail.
   */
  async expire(clientId: string, endpointId: string, at: number): Promise<void> {
    const { relay, expiryMs, settings, endpoints, dispatcher, storage, logger } = this.deps;
    const endpoint = await this.current(clientId, endpointId);
    const client = this.deps.registry.byId(clientId);
    if (!client || !endpoint || endpoint.listener === null) return;
    const again = (due: number) => storage.jobs.schedule({ kind: LISTENER_EXPIRY_JOB, key: endpointId, client_id: clientId, due_at: due });
    // Connected here, or to another replica that says so (its sandbox-time last_seen_at may lag an advance of a manual clock).
    if (await relay.connected(clientId, endpoint.listener)) {
      await this.seen(clientId, endpointId);
      return again(at + expiryMs);
    }
    const last = endpoint.last_seen_at ?? endpoint.created_at;
    if (last !== null && at - last < expiryMs) return again(last + expiryMs);
    const reason = webhookMessages.listenerExpired(endpoint.listener, last);
    const removed = await settings.unit(clientId, (tx) => endpoints.delete(client, endpointId, tx));
    if (!removed) return;
    const failed = await dispatcher.failHeld(clientId, endpointId, reason);
    relay.removed(clientId, endpoint.listener);
    logger.info({ client: clientId, listener: endpoint.listener, endpoint: endpointId, failed }, 'listener expired: endpoint removed, held deliveries failed');
  }
}
