import { Conflict, domainMessages, NotFound, RuleViolation, Unavailable, VERSION } from '../../shared/index.js';
import { clientOf, json, listInParts, type HandlerMap, type OperationInput } from '../handler.js';
import { sandboxWideOpenToClients } from '../roles.js';
import type { Order, OrderStatus, Stored } from '../../records/index.js';
import type { Clocks, ClockService } from '../../clock/index.js';
import { noSuchStep, stepNamed, type Fixtures } from '../../fixtures/index.js';
import type { OrdersService } from '../../orders/index.js';
import type { CompiledSpec } from '../../spec/index.js';
import type { Journey } from '../../tracking/index.js';
import type { ClientRegistry, Client } from '../../clients/index.js';
import type { Storage } from '../../store/index.js';
import { servedSpecText } from '../../spec/index.js';
import { hasPodScan } from '../../tracking/index.js';
import { clientList, orderState } from '../../orders/index.js';
import { LATEST_CLOCK_MS } from '../../clock/index.js';
import { enabledCouriers } from '../../rates/index.js';
/** Resets one client's data; other parts (webhooks, faults, journal) add their own. */
export type ResetPart = (clientId: string) => Promise<number>;

interface Deps {
  storage: Storage;
  orders: OrdersService;
  journey: Journey;
  clock: Clocks;
  clockService: ClockService;
  fixtures: Fixtures;
  specs: { provider: CompiledSpec; control: CompiledSpec };
  startedAt: number;
  registry: ClientRegistry;
}

/** Refuses an advance of `ms` that would move a clock standing at `from` past the latest time a clock may show. */
function checkAdvance(from: number, ms: number): void {
  if (ms === 0 || from + ms <= LATEST_CLOCK_MS) return; // {"ms": 0} moves nothing: a real clock that ran past the latest time may still run what is due
  const latest = new Date(LATEST_CLOCK_MS).toISOString();
  throw new RuleViolation([{ field: 'ms', message: `would move the clock past ${latest}, the latest time the sandbox can show (it stands at ${Number.isFinite(new Date(from).getTime()) ? new Date(from).toISOString() : `${from} ms`})` }]);
}

/** The control API: health, specs, scenarios, orders, clock, reset. */
export function controlHandlers(deps: Deps, resetParts: Record<string, ResetPart> = {}): HandlerMap {
  const { storage, orders, journey, clockService, fixtures, specs } = deps;
  const ownOrder = async (input: OperationInput): Promise<Stored<Order>> => {
    const order = await orders.get(clientOf(input), input.params.order_no!);
    if (!order) throw new NotFound(domainMessages.orderNotFound(input.params.order_no!));
    return order;
  };
  const show = (input: OperationInput, order: Order) => json(200, orderState(order, journey, input.baseUrl));
  const reset = async (client: Client): Promise<Record<string, number>> => {
    try {
      const removed: Record<string, number> = { orders: await orders.removeAll(client) };
      for (const [name, part] of Object.entries(resetParts)) removed[name] = await part(client.id);
      return removed;
    } catch (error) {
      // A reset removes a page at a time: the store going away midway leaves some of it done, which "nothing was saved" would deny.
      // (A data file another sandbox took over says so instead: running it again would not help.)
      if (error instanceof Unavailable && error.message !== domainMessages.lockLost) throw new Unavailable(domainMessages.resetStopped, error.retryAfterSeconds);
      throw error;
    }
  };

  return {
    getHealth: () => {
      const store = storage.health();
      return json(200, {
        status: 'ok',
        version: VERSION,
        uptime_ms: Date.now() - deps.startedAt,
        store: store.writable ? 'ok' : 'degraded',
        ...(store.error ? { store_error: store.error } : {}),
        ...(store.since !== undefined ? { store_degraded_since: new Date(store.since).toISOString() } : {}),
        ...(store.maintenanceError ? { store_maintenance_error: store.maintenanceError } : {}),
      });
    },
    getProviderSpec: ({ baseUrl }) => ({ status: 200, serialized: servedSpecText(specs.provider.document, baseUrl) }),
    getControlSpec: ({ baseUrl }) => ({ status: 200, serialized: servedSpecText(specs.control.document, baseUrl) }),

    getPodPhoto: async ({ params }) => {
      const awb = params.file === undefined ? undefined : journey.photos.awbOf(params.file);
      if (awb === undefined || !(await hasPodScan(fixtures, storage.orders, awb))) throw new NotFound();
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

    listOrders: async (input) => {
      const query = input.query as { status?: OrderStatus; scenario?: string; courier_code?: string; q?: string; limit?: number; cursor?: string };
      const page = await orders.list(clientOf(input), {
        limit: query.limit ?? 100,
        cursor: query.cursor,
        status: query.status,
        scenario: query.scenario,
        courier_code: query.courier_code,
        search: query.q,
        ...(input.between ? { between: input.between } : {}),
      });
      // Written in parts: a page of large orders serialized in one piece would hold the event loop.
      return listInParts({ total: page.total, next_cursor: page.next_cursor }, 'orders', page.items, (o) => orderState(o, journey, input.baseUrl), input.turn);
    },

    getOrderState: async (input) => show(input, await ownOrder(input)),

    generateAwb: async (input) => {
      const order = await ownOrder(input);
      return show(input, (await journey.generateNow(order.order_no)) ?? order);
    },

    advanceOrder: async (input) => {
      const order = await ownOrder(input);
      const given = (input.body as { step?: string | number } | undefined)?.step;
      const keys = journey.scenarioOf(order).steps.map((s) => s.key);
      const step = given === undefined ? undefined : stepNamed(keys, given);
      if (given !== undefined && step === undefined) {
        throw new RuleViolation([{ field: 'step', message: noSuchStep(order.scenario, keys, given) }]);
      }
      const advanced = await journey.advance(order.order_no, step);
      if (!advanced) {
        throw new Conflict(
          order.awb
            ? 'No step left to play (or the named step is already past).'
            : order.status === 'created'
              ? 'The order has no AWB yet: generate it first (POST .../awb).'
              : `The order has no AWB and will not get one (status ${order.status}): it has no steps to play. Create an order with another scenario for a journey.`,
        );
      }
      return show(input, advanced);
    },

    getClock: async (input) => json(200, await clockService.view(clientOf(input).id)),

    // Moves only the caller's clock (a manual one, or a jump of a real one); other clients see no change.
    advanceClock: async (input) => {
      const clientId = clientOf(input).id;
      const { ms } = input.body as { ms: number };
      checkAdvance(deps.clock.of(clientId), ms);
      await clockService.advance(clientId, ms);
      return json(200, await clockService.view(clientId));
    },

    // Sandbox-wide (an admin's): every client's clock, each at its own pace of due times.
    advanceAllClocks: async (input) => {
      const { ms } = input.body as { ms: number };
      // By the sandbox's own clock: a partner that took its own clock near the end must not block the admin's advance of everyone.
      checkAdvance(deps.clock.now(), ms);
      await clockService.advanceAll(ms);
      return json(200, await clockService.advancedView(ms));
    },

    setClockSpeed: async (input) => {
      await clockService.setSpeed((input.body as { speed: number }).speed);
      return json(200, await clockService.sandboxView());
    },

    resetClient: async (input) => json(200, { success: true, removed: await reset(clientOf(input)) }),

    resetSandbox: async () => {
      const clients: Record<string, Record<string, number>> = {};
      for (const id of deps.registry.clientIds) clients[id] = await reset(deps.registry.byId(id)!);
      return json(200, { success: true, clients });
    },

    listClients: () => json(200, { clients: clientList(deps.registry) }),

    whoAmI: (input) =>
      json(200, {
        role: input.role,
        // The client's name as the clients listing gives it, whichever of its tokens asks.
        // Its couriers as a create of it would find them: the dashboard prefills one of them without a provider request (observed, faulted).
        client: input.client ? { id: input.client.id, name: deps.registry.nameOf(input.client.id) ?? input.client.name, couriers: enabledCouriers(fixtures, input.client).map((c) => c.code) } : null,
        sandbox_wide: input.role === 'admin' || sandboxWideOpenToClients(deps.registry),
      }),
  };
}
