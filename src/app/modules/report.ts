import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';
import { reportHandlers } from '../../http/index.js';
import { ReportObserver } from '../../report/index.js';
import { asTheProviderReads } from '../../orders/index.js';
import type { ListenerRelay } from '../../webhooks/index.js';
import { sharedAbortController, within } from '../../shared/index.js';

/** How long a stop waits for the observations still being judged (the drain's webhook attempts among them). */
const STOP_JUDGING_MS = 2_000;

/**
 * The readiness report (`/__sandbox/report`, `/__sandbox/runs`, `/__sandbox/checks`):
 * what each client's run exercised of the catalogue (fixtures/readiness/catalogue.json)
 * and whether it handled it, and which provider operations and statuses it exercised.
 * `observer.attempts` goes to the webhook dispatcher.
 */
export function reportModule(services: Pick<Services, 'storage' | 'clock' | 'logger' | 'endpoints' | 'webhookTargets' | 'options' | 'specs' | 'orders' | 'registry'>): SandboxModule & { observer: ReportObserver; checkThrough(relay: ListenerRelay): void } {
  const { storage, clock, logger, endpoints, webhookTargets, options, specs, orders, registry } = services;
  // A refused create is compared with the next as the provider reads it (the served spec's fields).
  const readable = asTheProviderReads(orders.fields);
  // Its events show a path with the client's tokens redacted, as the journal does: only the client's partner tokens' requests are judged.
  const observer = new ReportObserver({ storage, logger, manualClock: clock.mode === 'manual', readable, secretsOf: (clientId) => registry.secretsOf(clientId, 'partner') });
  const shutdown = sharedAbortController();
  let relay: ListenerRelay | undefined;
  /** Resets run by this process, per client (a check run across one records nothing). */
  const resets = new Map<string, number>();
  return {
    name: 'report',
    observer,
    checkThrough: (listeners) => {
      relay = listeners;
    },
    handlers: reportHandlers({ relay: () => relay, storage, now: (clientId) => clock.of(clientId), endpoints, guard: webhookTargets, timeoutMs: options.webhookTimeout, observer, shutdown: shutdown.signal, operations: specs.provider.operations.map((op) => ({ operationId: op.operationId, method: op.method, path: op.path, statuses: op.ownStatuses })), resets: (clientId) => resets.get(clientId) ?? 0 }),
    observeAnswer: observer.answer,
    observeProvider: observer.request,
    reset: async (clientId) => {
      resets.set(clientId, (resets.get(clientId) ?? 0) + 1);
      await observer.settled(clientId);
      return storage.reports.clear(clientId);
    },
    close: async () => {
      shutdown.abort();
      // Past the bound (a store too slow to answer), the stop goes on, and says what it did not wait for.
      if ((await within(observer.idle().then(() => true), STOP_JUDGING_MS)) !== true) logger.warn({ waited_ms: STOP_JUDGING_MS }, 'readiness report: observations still being judged at the stop were not waited for');
    },
  };
}
