import type { CompiledOperation } from '../spec/index.js';
import type { Handler, HandlerMap } from './handler.js';
import type { SandboxModule } from './module.js';
import { isReadOperation, scopeOf } from './roles.js';

/**
 * Who may call an operation:
 * - `public`: anyone, no token;
 * - `read`: every role (admin, partner, read_only);
 * - `write`: admin and partner, on the caller's own client (an admin names one);
 * - `sandbox`: the admin only, or the only client of a sandbox without an admin token.
 * `roles.ts` enforces it from the operation's method (or `x-sandbox-read`), security and `x-sandbox-scope`;
 * test/unit/routes.test.ts holds this table to what it enforces.
 */
export type Access = 'public' | 'read' | 'write' | 'sandbox';

/** The spec an operation is in: the provider's API or the sandbox's control API. */
export type SpecName = 'provider' | 'control';

/** The spec of an operation, the module that serves it, and who may call it. */
export interface Route {
  spec: SpecName;
  by: string;
  access: Access;
}

/**
 * Every operation the sandbox serves with a handler of its own, on one page: the module
 * whose `handlers` serve it (`app/modules.ts` lists the plugged ones; `orders` and
 * `control` are always built, `app/app.ts`) and who may call it. An operation of
 * a spec that is not here is answered from the spec (examples or generated data).
 */
export const ROUTES: Readonly<Record<string, Route>> = {
  // The provider's API (spec/openapi.yaml)
  createOrder: { spec: 'provider', by: 'orders', access: 'write' },
  trackOrder: { spec: 'provider', by: 'orders', access: 'read' },
  cancelOrder: { spec: 'provider', by: 'orders', access: 'write' },
  getOrderDetail: { spec: 'provider', by: 'orders', access: 'read' },
  getEstimationRates: { spec: 'provider', by: 'rates', access: 'read' },
  listCouriers: { spec: 'provider', by: 'rates', access: 'read' },
  getShippingFee: { spec: 'provider', by: 'rates', access: 'read' },
  streamShippingFee: { spec: 'provider', by: 'rates', access: 'read' },
  listProvinces: { spec: 'provider', by: 'coverage', access: 'read' },
  listCities: { spec: 'provider', by: 'coverage', access: 'read' },
  listDistricts: { spec: 'provider', by: 'coverage', access: 'read' },
  searchArea: { spec: 'provider', by: 'coverage', access: 'read' },

  // The sandbox's control API (spec/sandbox-control.yaml)
  getHealth: { spec: 'control', by: 'control', access: 'public' },
  getProviderSpec: { spec: 'control', by: 'control', access: 'public' },
  getControlSpec: { spec: 'control', by: 'control', access: 'public' },
  getPodPhoto: { spec: 'control', by: 'control', access: 'public' },
  getMetrics: { spec: 'control', by: 'metrics', access: 'sandbox' },
  listScenarios: { spec: 'control', by: 'control', access: 'read' },
  listOrders: { spec: 'control', by: 'control', access: 'read' },
  getOrderState: { spec: 'control', by: 'control', access: 'read' },
  generateAwb: { spec: 'control', by: 'control', access: 'write' },
  advanceOrder: { spec: 'control', by: 'control', access: 'write' },
  triggerEvent: { spec: 'control', by: 'states', access: 'write' },
  listProviderStates: { spec: 'control', by: 'states', access: 'read' },
  changeProviderState: { spec: 'control', by: 'states', access: 'write' },
  getClock: { spec: 'control', by: 'control', access: 'read' },
  advanceClock: { spec: 'control', by: 'control', access: 'write' },
  advanceAllClocks: { spec: 'control', by: 'control', access: 'sandbox' },
  setClockSpeed: { spec: 'control', by: 'control', access: 'sandbox' },
  resetClient: { spec: 'control', by: 'control', access: 'write' },
  resetSandbox: { spec: 'control', by: 'control', access: 'sandbox' },
  listClients: { spec: 'control', by: 'control', access: 'sandbox' },
  whoAmI: { spec: 'control', by: 'control', access: 'read' },
  getWebhook: { spec: 'control', by: 'webhooks', access: 'read' },
  setWebhook: { spec: 'control', by: 'webhooks', access: 'write' },
  listWebhookDeliveries: { spec: 'control', by: 'webhooks', access: 'read' },
  getWebhookDelivery: { spec: 'control', by: 'webhooks', access: 'read' },
  redeliverWebhook: { spec: 'control', by: 'webhooks', access: 'write' },
  recoverWebhooks: { spec: 'control', by: 'webhooks', access: 'write' },
  testWebhook: { spec: 'control', by: 'webhooks', access: 'write' },
  listWebhookEndpoints: { spec: 'control', by: 'webhooks', access: 'read' },
  createWebhookEndpoint: { spec: 'control', by: 'webhooks', access: 'write' },
  getWebhookEndpoint: { spec: 'control', by: 'webhooks', access: 'read' },
  updateWebhookEndpoint: { spec: 'control', by: 'webhooks', access: 'write' },
  deleteWebhookEndpoint: { spec: 'control', by: 'webhooks', access: 'write' },
  listFaultRules: { spec: 'control', by: 'faults', access: 'read' },
  createFaultRule: { spec: 'control', by: 'faults', access: 'write' },
  deleteFaultRules: { spec: 'control', by: 'faults', access: 'write' },
  deleteFaultRule: { spec: 'control', by: 'faults', access: 'write' },
  listRequests: { spec: 'control', by: 'requests', access: 'read' },
  countRequests: { spec: 'control', by: 'requests', access: 'read' },
  clearRequests: { spec: 'control', by: 'requests', access: 'write' },
  getReport: { spec: 'control', by: 'report', access: 'read' },
  startRun: { spec: 'control', by: 'report', access: 'write' },
  runChecks: { spec: 'control', by: 'report', access: 'write' },
};

/** Who may call an operation, as `roles.ts` decides it from the spec (see `Access`). */
export function accessOf(op: Pick<CompiledOperation, 'method' | 'secured' | 'definition' | 'path'>): Access {
  if (scopeOf(op) === 'sandbox') return 'sandbox';
  if (!op.secured) return 'public';
  return isReadOperation(op) ? 'read' : 'write';
}

/**
 * The handlers of the modules, each operation's from the module the table names, for
 * the spec the table puts it in: a handler serves only an operation of its own spec (a
 * fuller provider spec given with `--spec` that reuses a control operationId gets the
 * spec's answers for it, never the control handler). A module that serves an operation
 * the table gives to another, or does not list, is a wiring mistake: it throws at start.
 * An operation whose module is not plugged in is left to the spec's answers.
 */
export function routedHandlers(modules: readonly SandboxModule[]): Record<SpecName, HandlerMap> {
  const handlers: Record<SpecName, Record<string, Handler>> = { provider: {}, control: {} };
  for (const module of modules) {
    for (const [operationId, handler] of Object.entries(module.handlers ?? {})) {
      const route = ROUTES[operationId];
      if (route?.by !== module.name) throw new Error(`The ${module.name} module serves ${operationId}, which the route table (http/routes.ts) ${route ? `gives to ${route.by}` : 'does not list'}.`);
      handlers[route.spec][operationId] = handler;
    }
  }
  return handlers;
}
