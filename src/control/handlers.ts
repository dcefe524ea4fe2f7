import { Conflict, NotFound, RuleViolation } from '../domain/errors.js';
import { clientOf, json, type HandlerMap, type OperationInput } from '../http/handler.js';
import type { Order } from '../orders/types.js';
import type { Services } from '../services.js';
import { VERSION } from '../version.js';
import { clockState, orderState } from './views.js';


/** Resets one client's data; other parts (webhooks, faults, journal) add their own. */
export type ResetPart = (clientId: string) => number;

/** The control API: health, specs, scenarios, orders, clock, reset. */
export function controlHandlers(services: Services, resetParts: Record<string, ResetPart> = {}): HandlerMap {
  const { orders, journey, clock, scheduler, fixtures, specs } = services;
  const ownOrder = (input: OperationInput): Order => {
    const order = orders.get(clientOf(input), input.params.order_no!);
    if (!order) throw new NotFound();
    return order;
  };
  const show = (input: OperationInput, order: Order) => json(200, orderState(order, journey, input.baseUrl));

  return {
    getHealth: () => json(200, { status: 'ok', version: VERSION, uptime_ms: Date.now() - services.startedAt }),
    getProviderSpec: () => json(200, specs.provider.document),
    getControlSpec: () => json(200, specs.control.document),

    getPodPhoto: ({ params }) => {
      if (!params.file?.endsWith('.png')) throw new NotFound();
      return { status: 200, serialized: fixtures.podPhoto, type: 'png', headers: { 'Cache-Control': 'public, max-age=86400' } };
    },

    listScenarios: () =>
      json(
        200,
        [...fixtures.scenarios.values()].map((s) => ({
          name: s.name,
          description: s.description,
          magic_awb: s.magic_awb,
          steps: s.steps.map((step) => ({ key: step.key, at: step.at, note: step.note, status: step.status })),
        })),
      ),

    listOrders: (input) => {
      const status = input.query.status as string | undefined;
      const limit = (input.query.limit as number | undefined) ?? 100;
      const all = orders.list(clientOf(input)).filter((o) => status === undefined || o.status === status);
      return json(200, { total: all.length, orders: all.slice(0, limit).map((o) => orderState(o, journey, input.baseUrl)) });
    },

    getOrderState: (input) => show(input, ownOrder(input)),

    generateAwb: async (input) => {
      const order = ownOrder(input);
      await journey.generateNow(order);
      return show(input, order);
    },

    advanceOrder: async (input) => {
      const order = ownOrder(input);
      const step = (input.body as { step?: string } | undefined)?.step;
      if (step !== undefined && !journey.scenarioOf(order).steps.some((s) => s.key === step)) {
        const keys = journey.scenarioOf(order).steps.map((s) => s.key);
        throw new RuleViolation([{ field: 'step', message: `must be a step of scenario ${order.scenario}: ${keys.join(', ')}` }]);
      }
      if (!(await journey.advance(order, step))) {
        throw new Conflict(order.awb ? 'No step left to play (or the named step is already past).' : 'The order has no AWB yet: generate it first (POST .../awb).');
      }
      return show(input, order);
    },

    getClock: () => json(200, clockState(clock, scheduler)),

    advanceClock: async (input) => {
      if (clock.mode !== 'manual') throw new Conflict('The clock is real: start the sandbox with --clock manual to advance it.');
      await services.advanceClock((input.body as { ms: number }).ms);
      return json(200, clockState(clock, scheduler));
    },

    resetClient: (input) => {
      const client = clientOf(input);
      const removed: Record<string, number> = { orders: orders.removeAll(client) };
      for (const [name, reset] of Object.entries(resetParts)) removed[name] = reset(client.id);
      services.store.commit();
      return json(200, { success: true, removed });
    },
  };
}

