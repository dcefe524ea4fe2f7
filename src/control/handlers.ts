import { ApiError, invalid, notFound } from '../http/errors.js';
import { clientOf, json, type HandlerMap, type OperationInput } from '../http/handler.js';
import type { Order } from '../orders/types.js';
import type { Services } from '../services.js';
import { VERSION } from '../version.js';
import { clockState, orderState } from './views.js';
import { hasPodScan } from './pod.js';
import { servedSpec } from '../spec/served.js';


/** Resets one client's data; other parts (webhooks, faults, journal) add their own. */
export type ResetPart = (clientId: string) => number;

/** The control API: health, specs, scenarios, orders, clock, reset. */
export function controlHandlers(services: Services, resetParts: Record<string, ResetPart> = {}): HandlerMap {
  const { orders, journey, clock, scheduler, fixtures, specs } = services;
  const ownOrder = (input: OperationInput): Order => {
    const order = orders.get(clientOf(input), input.params.order_no!);
    if (!order) throw notFound();
    return order;
  };
  const show = (input: OperationInput, order: Order) => json(200, orderState(order, journey, input.baseUrl));

  return {
    getHealth: () => json(200, { status: 'ok', version: VERSION, uptime_ms: Date.now() - services.startedAt }),
    getProviderSpec: ({ baseUrl }) => json(200, servedSpec(specs.provider.document, baseUrl)),
    getControlSpec: ({ baseUrl }) => json(200, servedSpec(specs.control.document, baseUrl)),

    getPodPhoto: ({ params, raw }) => {
      if (!params.file?.endsWith('.png') || !hasPodScan(services, params.file.slice(0, -'.png'.length))) throw notFound();
      raw.res.type('png').set('Cache-Control', 'public, max-age=86400').send(fixtures.podPhoto);
      return { streamed: true };
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
        throw invalid([{ field: 'step', message: `must be a step of scenario ${order.scenario}: ${keys.join(', ')}` }]);
      }
      if (!(await journey.advance(order, step))) {
        throw new ApiError(409, order.awb ? 'No step left to play (or the named step is already past).' : 'The order has no AWB yet: generate it first (POST .../awb).');
      }
      return show(input, order);
    },

    getClock: () => json(200, clockState(clock, scheduler)),

    advanceClock: async (input) => {
      if (clock.mode !== 'manual') throw new ApiError(409, 'The clock is real: start the sandbox with --clock manual to advance it.');
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

