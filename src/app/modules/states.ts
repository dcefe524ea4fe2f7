import { LISTEN_ANSWER_MARGIN_MS, stateHandlers, type SandboxModule } from '../../http/index.js';
import type { ReportObserver } from '../../report/index.js';
import { OrderSetups, ProviderStates } from '../../states/index.js';
import { PACT_RUN } from '../../records/index.js';
import type { Services } from '../services.js';
import { ordersRemoved } from './orders-removed.js';

/**
 * The longest a trigger's answer waits for its deliveries' first attempts: the webhook
 * timeout and TRIGGER_WAIT_MARGIN_MS, but never so long that `shipping-sandbox trigger`'s default --timeout
 * (30 s) runs out first, making a CI job that retries on its exit 2 fire the event again.
 */
export const TRIGGER_WAIT_MAX_MS = 25_000;
/**
 * Beyond the webhook timeout, what a trigger waits for an attempt's outcome: a listener's
 * answer is waited for LISTEN_ANSWER_MARGIN_MS past the timeout (a frozen listener's attempt
 * ends then), and its record takes a moment more.
 */
const TRIGGER_WAIT_MARGIN_MS = LISTEN_ANSWER_MARGIN_MS + 1_000;

/**
 * Orders set up in a named state: `POST /__sandbox/events/trigger` and the Pact provider
 * states (`/__sandbox/provider-states`). A state setup starts the client's readiness run
 * `pact` unless it is already the current one: the setups and the verifier's requests
 * that follow them are then graded in that run, not in the run of the client's own
 * code, which its CI starts again with `POST /__sandbox/runs` (DESIGN: "Pact runs do not
 * grade the client"). `modules`: the module list, whose `ordersRemoved` hooks a
 * teardown calls for the orders it removed (their webhook deliveries).
 */
export function statesModule(services: Pick<Services, 'storage' | 'orders' | 'journey' | 'fixtures' | 'clock' | 'clockService' | 'events' | 'ids' | 'options'>, observer: ReportObserver, modules: readonly SandboxModule[]): SandboxModule {
  const { storage, orders, journey, fixtures, clock, clockService, events, ids, options } = services;
  const setups = new OrderSetups({ storage, orders, journey, fixtures, clock, events, seed: ids.seed });
  const providerStates = new ProviderStates({ fixtures, setups, orders, removeDeliveries: (clientId, orderNos) => ordersRemoved(modules, clientId, orderNos) });
  const beforeSetup = async (client: { id: string }): Promise<void> => {
    if ((await storage.reports.get(client.id, { events: false })).run?.name === PACT_RUN) return;
    await observer.settled(client.id);
    await storage.reports.start(client.id, { name: PACT_RUN, started_at: clock.of(client.id), started_wall: Date.now() });
  };
  return { name: 'states', handlers: stateHandlers({ storage, orders, journey, fixtures, clockService, setups, providerStates, defaultScenario: options.scenario, triggerWaitMs: Math.min(options.webhookTimeout + TRIGGER_WAIT_MARGIN_MS, TRIGGER_WAIT_MAX_MS), beforeSetup }) };
}
