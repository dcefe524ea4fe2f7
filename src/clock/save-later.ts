/**
 * Saves tried again every `everyMs` until they hold (a shared store's database away), one
 * per key at a time; `stop` ends them (the sandbox stops). The timers are unref'd: they
 * keep no process alive.
 */
export class SaveLater {
  private readonly pending = new Map<string, NodeJS.Timeout>();

  constructor(private readonly everyMs: number) {}

  /** Tries `save` again in `everyMs`, and after each failure, until it holds; a key already waiting is left as it is. */
  add(key: string, save: () => Promise<void>): void {
    if (this.pending.has(key)) return;
    const retry = (): void => {
      const timer = setTimeout(() => {
        save().then(
          () => this.pending.delete(key),
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
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }
}
