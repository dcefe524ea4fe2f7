/**
 * `work`'s value, or undefined once `ms` pass without it: a bound on a wait, not a cancel
 * (the work goes on, its result unused). A failure within the time is thrown; one after it is
 * dropped. The timer holds the process open until the wait ends: a stop's bound must not let
 * the process exit before what follows the wait (a warning, the modules' close) has run.
 *
 * @example
 * const figures = await within(readFigures(), 2_000); // undefined: the store was too slow
 */
export async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
