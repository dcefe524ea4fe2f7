import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';
import { claimLeaseMs } from '../../config/index.js';
import { Listeners, takesDeliveries, unknownChaos, WebhookDispatcher, type AttemptObserver, type ListenerRelay, isSecret } from '../../webhooks/index.js';
import { chaosHeaderCheck, CursorSeal, ListenOpens, ListenServer, recoverHandlers, webhookHandlers } from '../../http/index.js';
import { domainMessages } from '../../shared/index.js';

/** Checks the clients' webhook settings; throws a message naming the one at fault. */
function checkClients(registry: Services['registry']): void {
  for (const client of registry.clients) {
    const { secret, chaos = [] } = client.webhook ?? {};
    if (secret !== undefined && !isSecret(secret)) throw new Error(`The webhook.secret of client ${client.id} ${domainMessages.webhookSecret}.`);
    const unknown = unknownChaos(chaos);
    if (unknown.length > 0) throw new Error(`The webhook.chaos of client ${client.id} names unknown modes: ${unknown.join(', ')}.`);
  }
}

/**
 * Webhook delivery: the outbox fed by order events, the signed and retried
 * dispatcher, the delivery log and the endpoint settings in the control API.
 *
 * @example sandboxModules = (services) => [webhooksModule(services)]
 */
export function webhooksModule(services: Pick<Services, 'admit' | 'storage' | 'scheduler' | 'clock' | 'registry' | 'logger' | 'events' | 'options' | 'ids' | 'endpoints' | 'settings' | 'webhookTargets' | 'metrics'>, observer?: AttemptObserver): SandboxModule & { relay: ListenerRelay } {
  const { storage, scheduler, clock, registry, logger, events, options, ids, endpoints, settings, webhookTargets, metrics } = services;
  checkClients(registry);
  const { webhookRetries: retries, webhookTimeout: timeoutMs } = options;
  // An outcome the store could not take at once is recorded later, while the job's claim still holds (1 s to spare).
  const recordWithinMs = claimLeaseMs(options) - timeoutMs - 1_000;
  const { admit } = services;
  const opens = new ListenOpens();
  // Listener endpoints (`shipping-sandbox listen`) are reached through the HTTP edge's connections.
  const relay = new ListenServer({
    registry,
    logger,
    ...(storage.signals ? { signals: storage.signals } : {}),
    bodyOf: async (id) => (await storage.deliveries.get(id))?.body,
    // A few listen opens a second per client (each writes its endpoints), and each counts against --rate-limit like any other request.
    admit: async (clientId) => {
      opens.take(clientId);
      await admit?.(clientId);
    },
  });
  const dispatcher = new WebhookDispatcher({ storage, clock, registry, endpoints, settings, retries, timeoutMs, recordWithinMs, outboxSize: options.outboxSize, seed: ids.seed, logger, guard: webhookTargets, onAttempt: (attempt) => metrics.attempt(attempt), observer, relay });
  dispatcher.attach(scheduler);
  const listeners = new Listeners({ storage, settings, endpoints, registry, clock, dispatcher, relay, expiryMs: options.listenerExpiry, logger });
  listeners.attach(scheduler);
  relay.bind(listeners);
  const askOthers = askedAtMostOncePer(CONNECTED_SEEN_MS, (clientId, name) => relay.connected(clientId, name));
  const connected = (clientId: string, name: string) => (relay.connectedHere(clientId, name) ? Promise.resolve(true) : askOthers(clientId, name));
  // The outbox lists the client's endpoints for each event: a producer may ask for them beside its own reads.
  events.subscribe((event, tx) => dispatcher.enqueue(event, tx), (clientId, tx) => endpoints.prefetch(clientId, tx));
  return {
    name: 'webhooks',
    relay,
    handlers: { ...webhookHandlers({ storage, clock, endpoints, settings, dispatcher, retries, timeoutMs, targets: webhookTargets, connected, cursors: new CursorSeal(ids.seed) }), ...recoverHandlers({ clock, endpoints, dispatcher, connected }) },
    providerInterceptors: [chaosHeaderCheck],
    reset: async (clientId) => {
      const removed = (await dispatcher.remove(clientId)) + (await endpoints.remove(clientId));
      // Its listeners' endpoints are gone: their sessions end (4002).
      relay.removedClient(clientId);
      return removed;
    },
    upgrade: (req, socket, head) => relay.upgrade(req, socket, head),
    prune: (olderThan, clientId) => dispatcher.prune(olderThan, clientId),
    ordersRemoved: (clientId, orderNos) => dispatcher.remove(clientId, orderNos),
    start: async () => {
      await relay.start();
      for (const client of registry.clients) {
        await endpoints.ensureSecret(client);
        // Deliveries still paused while the endpoint takes them: a stop in the middle of making them due again.
        const endpoint = await endpoints.of(client);
        if (takesDeliveries(endpoint)) await dispatcher.resumeAllPaused(client.id);
      }
    },
    close: async () => {
      // Hand-offs other replicas made to this one's listeners are answered first (none new is taken meanwhile);
      // then attempts still in flight end unrecorded (they stay due), and the sessions close (1001: the CLIs reconnect).
      await relay.drain();
      dispatcher.close();
      relay.close();
      await webhookTargets.close();
    },
  };
}

/**
 * How long the endpoint listing may show another replica's answer to "is this listener
 * connected?" (ms): each question costs every replica a NOTIFY and the asker up to
 * WHO_MS once it went out, so however often a partner lists its endpoints, a replica asks about one
 * listener at most once in this time (concurrent listings share the question).
 */
const CONNECTED_SEEN_MS = 1_000;

/** `ask`, its answer shared by the callers of the same question within `ms`. */
function askedAtMostOncePer(ms: number, ask: (clientId: string, name: string) => Promise<boolean>): (clientId: string, name: string) => Promise<boolean> {
  const asked = new Map<string, { answer: Promise<boolean>; at: number }>();
  return (clientId, name) => {
    const key = `${clientId}\n${name}`;
    const at = performance.now();
    const kept = asked.get(key);
    if (kept && at - kept.at < ms) return kept.answer;
    if (asked.size >= 1_000) for (const [k, v] of asked) if (at - v.at >= ms) asked.delete(k);
    const answer = ask(clientId, name);
    asked.set(key, { answer, at });
    return answer;
  };
}
