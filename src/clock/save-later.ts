/**
 * Saves tried again every `everyMs` until they hold (a shared store's database away), one
 * per key at a time; `stop` ends them, and none starts after it (the sandbox stops). The
 * timers are unref'd: they keep no process alive.
 */
export class SaveLater {
  private readonly pending = new Map<string, NodeJS.Timeout>();
  /** Keys whose save failed again while a retry of theirs was on its way: that retry saved an older state. */
  private readonly again = new Set<string>();
  private stopped = false;

  constructor(private readonly everyMs: number) {}

  /** Tries `save` again in `everyMs`, and after each failure, until it holds (once more after a retry already on its way). */
  add(key: string, save: () => Promise<void>): void {
    if (this.stopped) return;
    if (this.pending.has(key)) {
      this.again.add(key);
      return;
    }
    const retry = (): void => {
      const timer = setTimeout(() => {
        this.again.delete(key);
        save().then(
          () => {
            if (this.pending.get(key) !== timer) return;
            if (this.again.has(key)) retry();
            else this.pending.delete(key);
          },
          () => {
            if (this.pending.get(key) === timer) retry();
          },
        );
      }, this.everyMs);
      timer.unref();
      this.pending.set(key, timer);
    };
    retry();
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    this.again.clear();
  }
}
