import { faultMessages, noteApplied, type FaultRules } from '../../faults/index.js';
import type { FaultRule } from '../../records/index.js';
import { TooManyRequests } from '../../shared/index.js';
import type { Interceptor, Reply } from '../handler.js';
import { performFault } from './fault-actions.js';

/** Requests a client may have held open by fault rules at once (hang, latency, dribble, a reset after a delay); past it, 429. */
export const MAX_HELD_PER_CLIENT = 100;

/**
 * The fault stage (an interceptor, outermost): a provider request that matches one of
 * its client's fault rules gets what the rule says (a status, latency, a reset, a hang,
 * a dribbled answer) instead of, or around, its handler. Requests a rule keeps open over
 * time (a hang, a latency, a dribble, a reset after a delay) count toward
 * MAX_HELD_PER_CLIENT until their connection closes: each holds a connection of the
 * process, and one partner's must not use up the descriptors others need. `shutdown` ends
 * the held ones.
 */
export function faultInterceptor(rules: FaultRules, shutdown: AbortSignal): Interceptor {
  // Requests each client holds open now by fault rules: a hang has no end of its own, a dribble at 1 byte/s nearly none.
  const holding = new Map<string, number>();
  const holdsConnection = ({ action }: FaultRule): boolean => action.type === 'hang' || action.type === 'latency' || action.type === 'dribble' || (action.type === 'reset' && action.after_ms !== undefined);
  return async (input, next) => {
    const clientId = input.client?.id;
    // A rule that would hold one more request past the cap is not applied, so it is not spent either: its `times` are for requests it held.
    const rule = clientId === undefined ? undefined : await rules.take(clientId, input, (r) => holdsConnection(r) && (holding.get(clientId) ?? 0) >= MAX_HELD_PER_CLIENT);
    if (rule === 'refused') throw new TooManyRequests(faultMessages.tooManyHeld(MAX_HELD_PER_CLIENT), 1);
    if (!rule || clientId === undefined) return next();
    noteApplied(input, rule);
    const release = (): void => {
      const left = (holding.get(clientId) ?? 1) - 1;
      if (left > 0) holding.set(clientId, left);
      else holding.delete(clientId);
    };
    const holds = holdsConnection(rule);
    if (holds) {
      // Checked again: requests arriving together may all have passed take's check (then the rule was spent on this one).
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
    // A hang, a dribble and a cut hold until their connection ends; a latency until its answer is ready.
    if ('hold' in reply || 'dribble' in reply || 'cutAfterMs' in reply) return { ...reply, released: release };
    release();
    return reply;
  };
}
