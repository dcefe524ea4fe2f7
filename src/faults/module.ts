import type { Interceptor, OperationInput } from '../http/handler.js';
import type { SandboxModule } from '../module.js';
import type { Services } from '../services.js';
import { performFault } from './actions.js';
import { faultHandlers } from './handlers.js';
import { FaultRules } from './rules.js';
import type { FaultAction } from './types.js';

const applied = new WeakMap<OperationInput, FaultAction>();

/** The action of the fault rule applied to a request, if one was (the readiness report reads it once the request has closed). */
export const appliedFault = (input: OperationInput): FaultAction | undefined => applied.get(input);

/**
 * Fault injection: per-client rules (`/__sandbox/faults`) that answer matching
 * provider requests with a status, add latency, reset or hang the connection, or
 * dribble the answer.
 */
export function faultsModule(services: Pick<Services, 'storage' | 'clock' | 'options'>): SandboxModule {
  const rules = new FaultRules(services.storage, services.clock, services.options.seed);
  // Aborted at shutdown: requests held by `hang` rules are dropped then.
  const shutdown = new AbortController();
  const interceptor: Interceptor = async (input, next) => {
    const rule = input.client ? await rules.take(input.client.id, input) : undefined;
    if (rule) applied.set(input, rule.action);
    return rule ? performFault(rule, input, next, shutdown.signal, (key) => rules.chance(key)) : next();
  };
  return {
    name: 'faults',
    handlers: faultHandlers(rules),
    providerInterceptors: [interceptor],
    reset: (clientId) => rules.clear(clientId),
    close: () => shutdown.abort(),
  };
}
