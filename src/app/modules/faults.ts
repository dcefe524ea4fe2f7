import { TooManyRequests } from '../../shared/index.js';
import type { Interceptor, Reply } from '../../http/index.js';
import type { SandboxModule } from '../../http/index.js';
import type { Services } from '../services.js';
import { performFault } from '../../http/index.js';
import { faultHandlers } from '../../http/index.js';
import { faultMessages } from '../../faults/index.js';
import { FaultRules } from '../../faults/index.js';
import { noteApplied } from '../../faults/index.js';

/** Requests a client may have held unanswered by hang rules at once; past it, 429. */
export const MAX_HELD_PER_CLIENT = 100;


/**
 * Fault injection: per-client rules (`/__sandbox/faults`) that answer matching
 * provider requests with a status, add latency, reset or hang the connection, or
 * dribble the answer.
 */
export function faultsModule(services: Pick<Services, 'storage' | 'settings' | 'clock' | 'options'>): SandboxModule {
  const rules = new FaultRules(services.storage, services.settings, services.clock, services.options.seed);
  // Aborted at shutdown: requests held by `hang` rules are dropped then.
  const shutdown = new AbortController();
  // Requests each client has held by hang rules now: a hang has no end of its own, and
  // one partner's 2,000 hung connections held 2,000 file descriptors of the process.
  const holding = new Map<string, number>();
  const interceptor: Interceptor = async (input, next) => {
    const rule = input.client ? await rules.take(input.client.id, input) : undefined;
    if (!rule) return next();
    noteApplied(input, rule.action);
    const clientId = input.client!.id;
    const release = (): void => {
      const left = (holding.get(clientId) ?? 1) - 1;
      if (left > 0) holding.set(clientId, left);
      else holding.delete(clientId);
    };
    // A latency rule holds its requests for up to 10 minutes: they count as held too (one
    // partner's 2,800 requests under a long latency held 3,000 file descriptors).
    const holds = rule.action.type === 'hang' || rule.action.type === 'latency';
    if (holds) {
      const held = holding.get(clientId) ?? 0;
      if (held >= MAX_HELD_PER_CLIENT) throw new TooManyRequests(faultMessages.tooManyHeld(MAX_HELD_PER_CLIENT), 1);
      holding.set(clientId, held + 1);
    }
    let reply: Reply;
    try {
      reply = await performFault(rule, input, next, shutdown.signal, (key) => rules.chance(key));
    } catch (error) {
      if (holds) release();
      throw error;
    }
    if (!holds) return reply;
    // A hang holds until its connection ends; a latency until its answer is ready.
    if ('hold' in reply) return { ...reply, released: release };
    release();
    return reply;
  };
  return {
    name: 'faults',
    handlers: faultHandlers(rules),
    providerInterceptors: [interceptor],
    reset: (clientId) => rules.clear(clientId),
    close: () => shutdown.abort(),
  };
}
