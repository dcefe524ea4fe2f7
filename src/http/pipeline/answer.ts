import type { Reply } from '../handler.js';
import type { ServedRequest } from '../response-notes.js';
import type { Exchange } from './exchange.js';

/** The status a reply will answer with: null when none goes out (a reset connection, a held request). */
export function statusOf(reply: Reply): number | null {
  if ('status' in reply) return reply.status;
  if ('dribble' in reply) return reply.reply.status;
  return null;
}

/**
 * Stage 10, answer: the request as it is about to be answered with `status` is shown to
 * `options.answering` (the readiness report), which may hold the answer until what the
 * client's next request is judged against is in the store: sent after it, that request
 * finds it on whichever replica serves it. Undefined when nothing asks to wait (no
 * promise, no await: this runs for every request).
 */
export function beforeAnswer(x: Exchange, status: number | null): Promise<void> | undefined {
  const answering = x.options.answering;
  // Not once the connection has closed: its observers were told how it ended. (A reply that
  // fails before it is written is shown again, with the status of the error that answers it.)
  if (!answering || x.res.destroyed) return undefined;
  const now: ServedRequest = {
    input: x.served.input,
    query: x.served.query,
    seq: x.served.seq,
    method: x.served.method,
    arrivedAt: x.served.arrivedAt,
    violations: x.served.violations,
    status,
    durationMs: Number(process.hrtime.bigint() - x.started) / 1e6,
    aborted: false,
  };
  return answering(now);
}
