import type { OperationInput, Reply } from '../handler.js';
import { isBodyReply } from '../handler.js';
import { actsOnBrowser, faultMessages } from '../../faults/index.js';
import type { FaultRule } from '../../records/index.js';
import { headerOf, isJsonType } from '../../shared/index.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Does what a fault rule says to a request it applies to, as a reply the HTTP edge
 * carries out. `chance` draws in [0, 1); `shutdown`, aborted as the sandbox begins to stop,
 * ends held requests and sends the rest of dribbled answers at once.
 */
export async function performFault(
  rule: FaultRule,
  input: OperationInput,
  next: () => Promise<Reply>,
  shutdown: AbortSignal,
  chance: (key: string) => number,
): Promise<Reply> {
  const { action } = rule;
  switch (action.type) {
    case 'status': {
      const body = action.body ?? (action.status >= 400 ? { success: false, message: faultMessages.injected(action.status, rule.id), errors: [] } : undefined);
      // A rule kept from before such headers were refused does not set them either.
      const headers = action.headers && Object.fromEntries(Object.entries(action.headers).filter(([name]) => !actsOnBrowser(name)));
      // Text under a type that is not JSON (a gateway's HTML error page) is sent as written, not as a JSON string.
      const type = headerOf(headers, 'content-type');
      if (typeof body === 'string' && type !== undefined && !isJsonType(type)) return { status: action.status, serialized: body, type, headers };
      return { status: action.status, body, headers };
    }
    case 'latency': {
      const max = action.max_ms ?? action.ms;
      await sleep(action.ms + Math.floor(chance(`latency:${rule.id}:${rule.hits}`) * (max - action.ms + 1)));
      // The request is served after its wait as any other: in its client's turn.
      await input.turn?.();
      return next();
    }
    case 'reset':
      // A stream is cut wherever it is; a body ready sooner is sent up to half, then cut.
      return action.after_ms !== undefined ? { cutAfterMs: action.after_ms, reply: next() } : { reset: true };
    case 'hang':
      return { hold: shutdown };
    case 'dribble': {
      const reply = await next();
      // A body, or a stream (the fee's server-sent events): either is sent slowly.
      if (!isBodyReply(reply) && !('stream' in reply)) return reply;
      const wanted = action.interval_ms ?? 100;
      const chunkBytes = Math.max(1, Math.floor((action.bytes_per_second * wanted) / 1000));
      return { dribble: { chunkBytes, intervalMs: Math.max(wanted, (chunkBytes * 1000) / action.bytes_per_second) }, reply, hurry: shutdown };
    }
  }
}
