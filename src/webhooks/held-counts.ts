/** How long a count of a client's held deliveries stands, with this process's own changes added (wall ms). */
export const HELD_COUNT_MS = 1_000;

/**
 * Each client's held (paused) deliveries, as counted last, plus those this process held
 * since. The outbox bound was checked with a count per event, and a count reads every
 * held delivery of the client (up to `--outbox-size`): on PostgreSQL the most costly
 * statement of an AWB job once a few thousand were held, and at the bound (a client that
 * never set a URL, under load) it doubled the database's work per job. A count stands for
 * HELD_COUNT_MS, at the bound too; once stale, the store is asked again. So on one
 * process the bound is exact (what lowers the count here, a resume, a reset, a settled
 * held delivery, drops the client's count); replicas sharing a database learn of each
 * other's held deliveries, and of room another made, at the next count, within a second.
 */
export class HeldCounts {
  private readonly known = new Map<string, { count: number; at: number }>();

  constructor(private readonly wallNow: () => number = Date.now) {}

  /** The client's held deliveries: the standing count, or `count()` once it is stale. */
  async of(clientId: string, count: () => Promise<number>): Promise<number> {
    const known = this.known.get(clientId);
    const now = this.wallNow();
    if (known && now - known.at < HELD_COUNT_MS) return known.count;
    const counted = await count();
    this.known.set(clientId, { count: counted, at: now });
    return counted;
  }

  /** One more held delivery of the client (made by this process). */
  added(clientId: string): void {
    const known = this.known.get(clientId);
    if (known) known.count += 1;
  }

  /** The client's held deliveries changed otherwise (fewer, or not known how): counted afresh next time. */
  forget(clientId: string): void {
    this.known.delete(clientId);
  }
}
