import type { Client } from '../clients/index.js';
import type { Fixtures, ProviderState } from '../fixtures/index.js';
import type { OrdersService } from '../orders/index.js';
import type { Order } from '../records/index.js';
import { RuleViolation } from '../shared/index.js';
import type { OrderSetups } from './setups.js';

/**
 * The order code of every order a state setup makes: what its teardown finds them by
 * (in the store, so a teardown on another replica or after a restart finds them too).
 */
export const PROVIDER_STATE_ORDER_CODE = 'pact-provider-state';

/** Pact's body for a provider state change. */
export interface ProviderStateRequest {
  state?: string;
  params?: Record<string, unknown>;
  action?: 'setup' | 'teardown';
}

/** What a setup answers: the values a pact injects with `fromProviderState`, at the top level. */
export interface ProviderStateValues {
  order_no: string;
  awb: string | null;
  batch_id: string;
  order_code: string;
  status: string;
  state: string;
}

const ACTIONS = ['setup', 'teardown'] as const;

/**
 * Pact's provider states on the caller's data and clock: each named state of the
 * catalogue (fixtures/states/provider-states.json) sets up a fresh order through
 * OrderSetups; a teardown removes the orders state setups made. Bad input changes nothing.
 */
export class ProviderStates {
  constructor(
    private readonly deps: {
      fixtures: Fixtures;
      setups: OrderSetups;
      orders: OrdersService;
      /** Removes the client's webhook deliveries of these orders (they are gone), with their jobs. */
      removeDeliveries: (clientId: string, orderNos: readonly string[]) => Promise<number>;
    },
  ) {}

  /** The catalogue, in its file's order. */
  list(): ProviderState[] {
    return [...this.deps.fixtures.providerStates.values()];
  }

  /** The state the request names (undefined for an empty name), after checking the request; throws RuleViolation naming the field. */
  check(request: ProviderStateRequest): { action: 'setup' | 'teardown'; state: ProviderState | undefined } {
    const { action, state } = request;
    if (action === undefined) throw new RuleViolation([{ field: 'action', message: 'is required: setup or teardown' }]);
    if (!ACTIONS.includes(action)) throw new RuleViolation([{ field: 'action', message: 'must be setup or teardown' }]);
    if (state === undefined || state === '') return { action, state: undefined };
    const found = this.deps.fixtures.providerStates.get(state);
    if (!found) throw new RuleViolation([{ field: 'state', message: `must be a known state (GET /__sandbox/provider-states): ${[...this.deps.fixtures.providerStates.keys()].join('; ')}` }], `Unknown provider state "${state.length > 200 ? `${state.slice(0, 200)}…` : state}".`);
    return { action, state: found };
  }

  /** Sets up a fresh order in the state; an empty state name (Pact's, for interactions without one) sets up nothing. */
  async setup(client: Client, state: ProviderState | undefined): Promise<ProviderStateValues | Record<string, never>> {
    if (!state) return {};
    const order = await this.deps.setups.make(client, { stage: state.stage, scenario: state.scenario, ...(state.step ? { step: state.step } : {}) }, PROVIDER_STATE_ORDER_CODE);
    return valuesOf(order, state.state);
  }

  /** Removes every order a state setup made for the client, and their webhook deliveries. Returns how many orders. */
  async teardown(client: Client): Promise<number> {
    const removed = await this.deps.orders.removeByCode(client, PROVIDER_STATE_ORDER_CODE);
    await this.deps.removeDeliveries(client.id, removed);
    return removed.length;
  }
}

const valuesOf = (order: Order, state: string): ProviderStateValues => ({ order_no: order.order_no, awb: order.awb, batch_id: order.batch_id, order_code: order.item.order_code, status: order.status, state });
