import type { CounterRepository } from '../port.js';
import type { Db } from './db.js';

/** How many numbers of a counter in blocks a replica takes at once (see PgCounters). */
export const COUNTER_BLOCK = 32;

/** Ranks per millisecond of a replica's wall clock (see `rank`). */
const RANKS_PER_MS = 1_024;

/**
 * Counters whose values are names only (order numbers, batch ids, AWBs: drawn through a
 * permutation; a client's delivery numbers, hashed into its delivery ids; never compared):
 * a replica takes them in blocks. Other counters are taken one by one. What orders a
 * listing across replicas takes a rank instead (see `rank`).
 */
const inBlocks = (name: string): boolean => name === 'order' || name === 'batch' || name.startsWith('awb:') || name.startsWith('delivery:');

/**
 * Counters in the `counters` table. Order numbers, batch ids and AWBs come from blocks of
 * COUNTER_BLOCK that the replica takes from the row at once (`value + 32`): a create then
 * takes its two numbers without a round trip, and the row is locked for one create in
 * thirty-two. A replica of the version before takes `value + 1` of the same row, so during
 * a rolling upgrade both draw disjoint numbers from one row. With one replica the numbers
 * come in the order the embedded store gives them; at close the rest of the block goes
 * back when no one took from the row since, so a restart goes on where it stopped. (A
 * replica that dies leaves its block's rest unused: a gap, never a repeat.)
 */
export class PgCounters implements CounterRepository {
  private readonly blocks = new Map<string, { next: number; last: number }>();
  private readonly taking = new Map<string, Promise<void>>();
  private closing = false;
  private lastRank = 0;

  constructor(private readonly db: () => Db) {}

  /**
   * A rank of this replica's wall clock, without a round trip: the millisecond times
   * RANKS_PER_MS, or one above the last rank given when that is higher (several in one
   * millisecond, or a clock set back). Ranks of rows written before, from the counter's
   * row one by one, are far below any such rank, so those rows rank as older.
   */
  async rank(_name: string): Promise<number> {
    this.lastRank = Math.max(this.lastRank + 1, Date.now() * RANKS_PER_MS);
    return this.lastRank;
  }

  async next(name: string): Promise<number> {
    if (this.closing || !inBlocks(name)) return this.take(name, 1);
    for (;;) {
      const block = this.blocks.get(name);
      if (block && block.next <= block.last) return block.next++;
      // One block at a time per counter: units waiting for it share it.
      let taking = this.taking.get(name);
      if (!taking) {
        taking = this.take(name, COUNTER_BLOCK)
          .then((last) => void this.blocks.set(name, { next: last - COUNTER_BLOCK + 1, last }))
          .finally(() => this.taking.delete(name));
        this.taking.set(name, taking);
      }
      await taking;
      if (this.closing) return this.take(name, 1);
    }
  }

  /** Gives back the numbers of this replica's blocks not handed out, where the row still ends at its block; numbers are taken one by one after. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.allSettled(this.taking.values());
    const rests = [...this.blocks].filter(([, block]) => block.next <= block.last);
    this.blocks.clear();
    for (const [name, { next, last }] of rests) {
      await this.db().query('UPDATE counters SET value = $2 WHERE name = $1 AND value = $3', [name, next - 1, last]).catch(() => undefined);
    }
  }

  /** Adds `count` to the counter (made at 0 if new): its new value, the last of the `count` numbers taken. */
  private async take(name: string, count: number): Promise<number> {
    const { rows } = await this.db().query<{ value: string }>(
      'INSERT INTO counters (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value RETURNING value',
      [name, count],
    );
    return Number(rows[0]!.value);
  }
}
