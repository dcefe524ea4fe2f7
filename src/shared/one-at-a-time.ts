/**
 * Work queued per key, run one piece at a time for each key (a client's advances, its
 * fault-rule changes); pieces of different keys run side by side. A piece runs once the
 * one before it has settled, whether it succeeded or failed, and its own result or
 * failure goes to its caller only.
 *
 * @example
 * const advances = new OneAtATime();
 * await Promise.all([advances.run('client-a', first), advances.run('client-a', second)]); // second starts once first settled
 */
export class OneAtATime {
  /** Each key's latest piece, settled quietly: what the next one waits for. */
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `work` after the key's pieces queued before it; `settled` is called once it has settled, whatever its outcome. */
  run<T>(key: string, work: () => Promise<T>, settled?: () => void): Promise<T> {
    const mine = (this.tails.get(key) ?? Promise.resolve()).then(work, work);
    const tail = mine.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
      settled?.();
    });
    return mine;
  }

  /** Resolves once every piece queued so far has settled. */
  async idle(): Promise<void> {
    await Promise.all(this.tails.values());
  }
}
