/** How long a count of a client's held deliveries stands, with this process's own changes added (wall ms). */
export const HELD_COUNT_MS = 1_000;

/**
 * Each client's held (paused) deliveries, as counted last, plus those this process held
 * since. The outbox bound is checked for every event, and a count reads every held
 * delivery of the client (up to `--outbox-size`): counting afresh each time would make
 * a client that holds many (one that never set a URL) cost the store more on every job.
 *
 * A count stands for HELD_COUNT_MS, with this process's own held deliveries added:
 * - below the bound an overcount changes no decision, so what it adds needs no care (a
 *   unit that adds one and then rolls back);
 * - at the bound it stands only if the store's count itself reached it; one that reached
 *   it only with what this process added is counted again;
 * - for HELD_COUNT_MS after this process lowered a client's count (a resume, a reset, a
 *   settled held delivery: `forget`), every count is fresh and none stands, so neither a
 *   count begun before nor one that ran before the change committed is kept.
 * So on one process the bound is exact; replicas sharing a database learn of each other's
 * held deliveries, and of room another made, at the next count, within a second.
 */
export class HeldCounts {
  private readonly known = new Map<string, { counted: number; added: number; at: number }>();
  /** When this process last lowered a client's count. */
  private readonly lowered = new Map<string, number>();

  constructor(
    private readonly bound: number,
    private readonly wallNow: () => number = Date.now,
  ) {}

  /**
   * The client's held deliveries: the standing count (see the class), or `count()`. Of a
   * fresh count, the `own` held deliveries of the running unit of work, not committed yet,
   * stand as this process's additions, not as the store's count: a unit that rolls back
   * must not leave a count at the bound standing.
   */
  async of(clientId: string, count: () => Promise<number>, own: () => number = () => 0): Promise<number> {
    const known = this.known.get(clientId);
    if (known && this.wallNow() - known.at < HELD_COUNT_MS && (known.counted >= this.bound || known.counted + known.added < this.bound)) {
      return known.counted + known.added;
    }
    const at = this.wallNow();
    const counted = await count();
    const lowered = this.lowered.get(clientId);
    if (lowered !== undefined && this.wallNow() - lowered < HELD_COUNT_MS) return counted;
    this.lowered.delete(clientId);
    const added = Math.min(counted, own());
    this.known.set(clientId, { counted: counted - added, added, at });
    return counted;
  }

  /** One more held delivery of the client (made by this process). */
  added(clientId: string): void {
    const known = this.known.get(clientId);
    if (known) known.added += 1;
  }

  /** The client's held deliveries changed otherwise (fewer, or not known how): counted afresh for a while (see the class). */
  forget(clientId: string): void {
    this.known.delete(clientId);
    this.lowered.set(clientId, this.wallNow());
  }
}
