import { NotFound } from '../../shared/index.js';
import { clientOf, json, type HandlerMap } from '../handler.js';
import type { Client } from '../../clients/index.js';
import type { ClockService } from '../../clock/index.js';
import type { Fixtures } from '../../fixtures/index.js';
import { orderState, type OrdersService } from '../../orders/index.js';
import type { Delivery, Stored, WebhookEventType } from '../../records/index.js';
import type { Storage } from '../../store/index.js';
import type { Journey } from '../../tracking/index.js';
import { deliveryView } from '../../webhooks/index.js';
import { targetOfTrigger, type OrderSetups, type OrderTarget, type ProviderStateRequest, type ProviderStates, type TriggerRequest } from '../../states/index.js';

export interface StateHandlerDeps {
  storage: Storage;
  orders: OrdersService;
  journey: Journey;
  fixtures: Fixtures;
  clockService: ClockService;
  setups: OrderSetups;
  providerStates: ProviderStates;
  defaultScenario: string;
  /** Called before a state setup: the verifier's traffic gets a readiness run of its own (see the module). */
  beforeSetup: (client: Client) => Promise<void>;
}

/** The webhook event whose delivery is a trigger's outcome. */
const EVENT_OF: Record<OrderTarget['stage'], WebhookEventType | undefined> = { created: undefined, awb_generated: 'awb.generated', at_step: 'awb.generated', awb_failed: 'awb.failed', cancelled: 'order.cancelled' };

/** The trigger and the Pact provider states in the control API. */
export function stateHandlers(deps: StateHandlerDeps): HandlerMap {
  const { storage, orders, journey, setups, providerStates, clockService } = deps;
  const deliveriesOf = async (clientId: string, orderNo: string): Promise<Stored<Delivery>[]> => (await storage.deliveries.list(clientId, { limit: 100, order_no: orderNo })).items;

  return {
    triggerEvent: async (input) => {
      const client = clientOf(input);
      const request = input.body as TriggerRequest;
      const existing = request.order_no === undefined ? undefined : await orders.get(client, request.order_no);
      if (request.order_no !== undefined && !existing) throw new NotFound(`Order ${request.order_no} not found.`);
      const target = targetOfTrigger(deps.fixtures, request, existing?.scenario, client.scenario ?? deps.defaultScenario);
      const before = new Set(existing ? (await deliveriesOf(client.id, existing.order_no)).map((d) => d.id) : []);
      const set = existing ? await setups.take(client, existing, target) : await setups.make(client, target, 'sandbox-trigger');
      // What is due now (the first attempts) is played, so the answer can say how it went.
      await clockService.advance(client.id, 0);
      const order = (await orders.get(client, set.order_no)) ?? set;
      const now = clockService.clocks.of(client.id);
      const made = (await deliveriesOf(client.id, order.order_no)).filter((d) => !before.has(d.id));
      const event = EVENT_OF[target.stage];
      const own = made.find((d) => d.event === event);
      return json(200, { event: request.event, order: orderState(order, journey, input.baseUrl), deliveries: made.map((d) => deliveryView(d, now)), outcome: own ? deliveryView(own, now).status : null });
    },

    listProviderStates: () => json(200, { states: providerStates.list().map((s) => ({ state: s.state, stage: s.stage, scenario: s.scenario, step: s.step ?? null, description: s.description })) }),

    changeProviderState: async (input) => {
      const client = clientOf(input);
      const { action, state } = providerStates.check((input.body ?? {}) as ProviderStateRequest);
      if (action === 'teardown') return json(200, { removed: await providerStates.teardown(client) });
      const values = await providerStates.setup(client, state);
      // Only a setup that worked starts the verifier's run: a refused one leaves the client's run as it was.
      await deps.beforeSetup(client);
      return json(200, values);
    },
  };
}
