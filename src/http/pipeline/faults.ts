import { faultMessages, noteApplied, type FaultRules } from '../../faults/index.js';
import { TooManyRequests } from '../../shared/index.js';
import type { Interceptor, Reply } from '../handler.js';
import { performFault } from './fault-actions.js';

/** Requests a client may have held unanswered by hang and latency rules at once; past it, 429. */
export const MAX_HELD_PER_CLIENT = 100;

/**
 * The fault stage (an interceptor, outermost): a provider request that matches one of
 * its client's fault rules gets what the rule says (a status, latency, a reset, a hang,
 * a dribbled answer) instead of, or around, its handler. Requests held by a hang or a
 * latency count toward MAX_HELD_PER_CLIENT: each holds a connection of the process.
 * `shutdown` ends the held ones.
 */
export function faultInterceptor(rules: FaultRules, shutdown: AbortSignal): Interceptor {
  // Requests each client holds now by hang and latency rules: a hang has no end of its own.
  const holding = new Map<string, number>();
  return async (input, next) => {
    const rule = input.client ? await rules.take(input.client.id, input) : undefined;
    if (!rule) return next();
    noteApplied(input, rule.action);
    const clientId = input.client!.id;
    const release = (): void => {
      const left = (holding.get(clientId) ?? 1) - 1;
      if (left > 0) holding.set(clientId, left);
      else holding.delete(clientId);
    };
    // A latency rule holds its requests for up to 10 minutes: they count as held too.
    const holds = rule.action.type === 'hang' || rule.action.type === 'latency';
    if (holds) {
      const held = holding.get(clientId) ?? 0;
      if (held >= MAX_HELD_PER_CLIENT) throw new TooManyRequests(faultMessages.tooManyHeld(MAX_HELD_PER_CLIENT), 1);
      holding.set(clientId, held + 1);
    }
    let reply: Reply;
    try {
      reply = await performFault(rule, input, next, shutdown, (key) => rules.chance(key));
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
}
