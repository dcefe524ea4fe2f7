import type { CompiledOperation } from '../spec/index.js';
import type { Handler, HandlerMap } from './handler.js';
import type { SandboxModule } from './module.js';
import { isReadMethod, scopeOf } from './roles.js';

/**
 * Who may call an operation:
 * - `public`: anyone, no token;
 * - `read`: every role (admin, partner, read_only);
 * - `write`: admin and partner, on the caller's own client (an admin names one);
 * - `sandbox`: the admin only, or the only client of a sandbox without an admin token.
 * `roles.ts` enforces it from the operation's method, security and `x-sandbox-scope`;
 * test/unit/routes.test.ts holds this table to what it enforces.
 */
export type Access = 'public' | 'read' | 'write' | 'sandbox';

/** The module that serves an operation, and who may call it. */
export interface Route {
  by: string;
  access: Access;
}

/**
 * Every operation the sandbox serves with a handler of its own, on one page: the module
 * whose `handlers` serve it (see `app/modules.ts`) and who may call it. An operation of
 * a spec that is not here is answered from the spec (examples or generated data).
 */
export const ROUTES: Readonly<Record<string, Route>> = {
  // The provider's API (spec/openapi.yaml)
  createOrder: { by: 'orders', access: 'write' },
  trackOrder: { by: 'orders', access: 'read' },
  cancelOrder: { by: 'orders', access: 'write' },
  getOrderDetail: { by: 'orders', access: 'read' },
  getEstimationRates: { by: 'rates', access: 'read' },
  listCouriers: { by: 'rates', access: 'read' },
  getShippingFee: { by: 'rates', access: 'read' },
  streamShippingFee: { by: 'rates', access: 'read' },
  listProvinces: { by: 'coverage', access: 'read' },
  listCities: { by: 'coverage', access: 'read' },
  listDistricts: { by: 'coverage', access: 'read' },
  searchArea: { by: 'coverage', access: 'read' },

  // The sandbox's control API (spec/sandbox-control.yaml)
  getHealth: { by: 'control', access: 'public' },
  getProviderSpec: { by: 'control', access: 'public' },
  getControlSpec: { by: 'control', access: 'public' },
  getPodPhoto: { by: 'control', access: 'public' },
  getMetrics: { by: 'metrics', access: 'sandbox' },
  listScenarios: { by: 'control', access: 'read' },
  listOrders: { by: 'control', access: 'read' },
  getOrderState: { by: 'control', access: 'read' },
  generateAwb: { by: 'control', access: 'write' },
  advanceOrder: { by: 'control', access: 'write' },
  getClock: { by: 'control', access: 'read' },
  advanceClock: { by: 'control', access: 'write' },
  advanceAllClocks: { by: 'control', access: 'sandbox' },
  setClockSpeed: { by: 'control', access: 'sandbox' },
  resetClient: { by: 'control', access: 'write' },
  resetSandbox: { by: 'control', access: 'sandbox' },
  listClients: { by: 'control', access: 'sandbox' },
  getWebhook: { by: 'webhooks', access: 'read' },
  setWebhook: { by: 'webhooks', access: 'write' },
  listWebhookDeliveries: { by: 'webhooks', access: 'read' },
  getWebhookDelivery: { by: 'webhooks', access: 'read' },
  redeliverWebhook: { by: 'webhooks', access: 'write' },
  testWebhook: { by: 'webhooks', access: 'write' },
  listFaultRules: { by: 'faults', access: 'read' },
  createFaultRule: { by: 'faults', access: 'write' },
  deleteFaultRules: { by: 'faults', access: 'write' },
  deleteFaultRule: { by: 'faults', access: 'write' },
  listRequests: { by: 'requests', access: 'read' },
  clearRequests: { by: 'requests', access: 'write' },
  getReport: { by: 'report', access: 'read' },
  startRun: { by: 'report', access: 'write' },
  runChecks: { by: 'report', access: 'write' },
};

/** Who may call an operation, as `roles.ts` decides it from the spec (see `Access`). */
export function accessOf(op: Pick<CompiledOperation, 'method' | 'secured' | 'definition'>): Access {
  if (scopeOf(op) === 'sandbox') return 'sandbox';
  if (!op.secured) return 'public';
  return isReadMethod(op.method) ? 'read' : 'write';
}

/**
 * The handlers of the modules, each operation's from the module the table names. A
 * module that serves an operation the table gives to another, or does not list, is a
 * wiring mistake: it throws at start. An operation whose module is not plugged in is
 * left to the spec's answers.
 */
export function routedHandlers(modules: readonly SandboxModule[]): HandlerMap {
  const handlers: Record<string, Handler> = {};
  for (const module of modules) {
    for (const [operationId, handler] of Object.entries(module.handlers ?? {})) {
      const route = ROUTES[operationId];
      if (route?.by !== module.name) throw new Error(`The ${module.name} module serves ${operationId}, which the route table (http/routes.ts) ${route ? `gives to ${route.by}` : 'does not list'}.`);
      handlers[operationId] = handler;
    }
  }
  return handlers;
}
