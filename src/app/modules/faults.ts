import { parse as parseBytes } from 'bytes';
import { faultHandlers, faultInterceptor, type SandboxModule } from '../../http/index.js';
import { FaultRules } from '../../faults/index.js';
import { sharedAbortController } from '../../shared/index.js';
import type { Services } from '../services.js';

/**
 * Fault injection: per-client rules (`/__sandbox/faults`) that answer matching
 * provider requests with a status, add latency, reset or hang the connection, or
 * dribble the answer.
 */
export function faultsModule(services: Pick<Services, 'storage' | 'settings' | 'clock' | 'options' | 'specs' | 'registry'>): SandboxModule {
  const rules = new FaultRules(services.storage, services.settings, services.clock, services.options.seed);
  // Aborted as the sandbox begins to stop: requests held by `hang` rules are dropped, dribbled answers sent whole.
  const shutdown = sharedAbortController();
  const interceptor = faultInterceptor(rules, shutdown.signal);
  return {
    name: 'faults',
    handlers: faultHandlers(rules, services.registry, services.specs.provider.operations, { bytes: parseBytes(services.options.bodyLimit) ?? Infinity, text: services.options.bodyLimit }),
    providerInterceptors: [interceptor],
    reset: (clientId) => rules.clear(clientId),
    stopping: () => shutdown.abort(),
    close: () => shutdown.abort(),
  };
}
