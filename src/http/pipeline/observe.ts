import type { ServedRequest } from '../response-notes.js';
import { laneOf, type Exchange } from './exchange.js';

/**
 * Stage 0, observe (set up first, run last): once the request's connection closes, the
 * observers (the request journal, the readiness report, the metrics) are told how it
 * ended. The loop time they take is charged to the request's client, outside its turn.
 */
export function observe(x: Exchange, observers: ReadonlyArray<(served: ServedRequest) => void>, onError: (error: unknown) => void): void {
  const { res, served, started, op, input, options } = x;
  res.once('close', () => {
    const observing = performance.now();
    // Field by field rather than by a spread: this runs for every request.
    const done: ServedRequest = {
      input: served.input,
      query: served.query,
      seq: served.seq,
      method: served.method,
      arrivedAt: served.arrivedAt,
      violations: served.violations,
      status: res.headersSent ? res.statusCode : null,
      durationMs: Number(process.hrtime.bigint() - started) / 1e6,
      aborted: !res.writableFinished,
    };
    // In a close listener a throw would be uncaught: one observer's failure is reported, and the others still run.
    for (const observer of observers) {
      try {
        observer(done);
      } catch (error) {
        onError(error);
      }
    }
    if (op.secured && input.role !== undefined) options.charge?.(laneOf(input), performance.now() - observing);
  });
}
