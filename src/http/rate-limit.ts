import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { domainMessages, TooManyRequests } from '../shared/index.js';
import { ADMIN_LANE } from './pipeline/index.js';

/**
 * `--rate-limit N`: at most N requests per second per client (the admin tokens together
 * count as one), provider and control operations together, counted in this process (each replica counts its own). Past
 * it a request is refused with a 429 and `Retry-After` before it is validated or
 * does any work. Undefined when there is no limit.
 */
export function clientRateLimit(perSecond: number): ((clientId: string) => Promise<void>) | undefined {
  if (perSecond <= 0) return undefined;
  const limiter = new RateLimiterMemory({ points: perSecond, duration: 1 });
  return async (clientId) => {
    try {
      await limiter.consume(clientId);
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      const seconds = Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
      throw new TooManyRequests(domainMessages.rateLimited(perSecond, seconds, clientId === ADMIN_LANE), seconds);
    }
  };
}
