import type { Handler, Interceptor, OperationInput, Reply } from '../handler.js';

/**
 * Stages 7 and 8, intercept and handle: the interceptors (faults, Prefer answers, the
 * webhook chaos header check), outermost first, around the operation's handler. Composed
 * once per operation.
 */
export function intercepted(interceptors: readonly Interceptor[], handler: Handler): (input: OperationInput) => Promise<Reply> {
  return (input) => {
    const run = interceptors.reduceRight<() => Promise<Reply>>(
      (next, interceptor) => () => interceptor(input, next),
      async () => handler(input),
    );
    return run();
  };
}
