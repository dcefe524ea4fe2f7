import { clientOf, json, type HandlerMap } from '../handler.js';
import type { Client } from '../../clients/index.js';
import type { ClockService } from '../../clock/index.js';
import type { Fixtures } from '../../fixtures/index.js';
import { orderState, type OrdersService } from '../../orders/index.js';
import type { Storage } from '../../store/index.js';
import type { Journey } from '../../tracking/index.js';
import { deliveryView } from '../../webhooks/index.js';
import { fireTrigger, type OrderSetups, type ProviderStateRequest, type ProviderStates, type TriggerDeps, type TriggerRequest } from '../../states/index.js';

export interface StateHandlerDeps {
  storage: Storage;
  orders: OrdersService;
  journey: Journey;
  fixtures: Fixtures;
  clockService: ClockService;
  setups: OrderSetups;
  providerStates: ProviderStates;
  defaultScenario: string;
  /** How long a trigger's answer waits for the first attempts of its deliveries, at most (see TriggerDeps). */
  triggerWaitMs: number;
  /** Called before a state setup: the verifier's traffic gets a readiness run of its own (see the module). */
  beforeSetup: (client: Client) => Promise<void>;
}

/** The trigger and the Pact provider states in the control API. */
export function stateHandlers(deps: StateHandlerDeps): HandlerMap {
  const { storage, orders, journey, setups, providerStates, clockService } = deps;
  const trigger: TriggerDeps = { fixtures: deps.fixtures, orders, setups, storage, playDue: clockService.clocks.mode === 'manual' ? (clientId) => clockService.advance(clientId, 0) : undefined, now: (clientId) => clockService.clocks.of(clientId), playDueWithinMs: deps.triggerWaitMs, defaultScenario: deps.defaultScenario };

  return {
    triggerEvent: async (input) => {
      const client = clientOf(input);
      const { order, made, own } = await fireTrigger(trigger, client, input.body as TriggerRequest);
      const now = clockService.clocks.of(client.id);
      return json(200, { event: (input.body as TriggerRequest).event, order: orderState(order, journey, input.baseUrl), deliveries: made.map((d) => deliveryView(d, now)), outcome: own ? deliveryView(own, now).status : null });
    },

    listProviderStates: () => json(200, { states: providerStates.list().map((s) => ({ state: s.state, stage: s.stage, scenario: s.scenario, step: s.step ?? null, description: s.description })) }),

    changeProviderState: async (input) => {
      const client = clientOf(input);
      const { action, state } = providerStates.check((input.body ?? {}) as ProviderStateRequest);
      if (action === 'teardown') return json(200, { removed: await providerStates.teardown(client) });
      const values = await providerStates.setup(client, state);
      // Only a setup that worked starts the verifier's run: a refused one leaves the client's
      // run as it was. So does one an admin made for the client: an admin's requests are not graded.
      if (input.role !== 'admin') await deps.beforeSetup(client);
      return json(200, values);
    },
  };
}
