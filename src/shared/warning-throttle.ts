/**
 * Lets a warning through at most once per key per interval, counting those it held back,
 * so a condition that repeats on every request logs a line a minute, not a flood.
 *
 * @example
 * const throttle = new WarningThrottle(60_000);
 * const held = throttle.take('client-a'); // 0: log it; undefined for the rest of the minute
 * if (held !== undefined) logger.warn({ held }, 'outbox full');
 */
export class WarningThrottle {
  private readonly last = new Map<string, { at: number; held: number }>();

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** How many warnings for `key` were held back since the last one let through, if this one goes through; else undefined. */
  take(key: string): number | undefined {
    const now = this.now();
    const last = this.last.get(key);
    if (last && now - last.at < this.intervalMs) {
      last.held += 1;
      return undefined;
    }
    this.last.set(key, { at: now, held: 0 });
    return last?.held ?? 0;
  }
}
