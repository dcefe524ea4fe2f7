import { performance } from 'node:perf_hooks';
import type { CounterRepository } from '../port.js';
import type { Db } from './db.js';

/** How many numbers of a counter in blocks a replica takes at once (see PgCounters). */
export const COUNTER_BLOCK = 32;

/** Ranks per millisecond of the database's clock (see ClockRanks). */
const RANKS_PER_MS = 1_024;

/** The counter whose ranks come from the database's clock (the delivery log's order). */
const CLOCK_RANKED = 'delivery';

/** How often a replica that gave ranks reads the database's clock and moves the ranked row on (see ClockRanks). */
const RANK_SYNC_MS = 1_000;

/** How far ahead of the database's clock a replica keeps the ranked row (see ClockRanks). */
export const RANK_LEAD_MS = 2 * RANK_SYNC_MS;

/**
 * Moves the ranked row on to the rank of the database's clock RANK_LEAD_MS ahead, or past
 * the replica's last rank if that is higher; answers the row and the database's clock.
 */
const PUSH_RANKS = `INSERT INTO counters (name, value)
  VALUES ($1, GREATEST($2::bigint + 1, ((extract(epoch FROM clock_timestamp()) * 1000 + $3) * ${RANKS_PER_MS})::bigint))
  ON CONFLICT (name) DO UPDATE SET value = GREATEST(counters.value, excluded.value)
  RETURNING value, (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now_ms`;

/**
 * The delivery log's ranks on PostgreSQL, taken without a round trip: the database's
 * clock in milliseconds times RANKS_PER_MS, or one above the last rank given when that is
 * higher (several in one millisecond). Every RANK_SYNC_MS that it gave ranks in, off the
 * request path, a replica reads the database's clock and keeps the offset of its own monotonic clock from it (a
 * host's wall clock may step; the monotonic one only drifts, by far less than a
 * millisecond a second), so replicas rank as the one clock does, whatever their hosts'
 * wall clocks say.
 *
 * At each read a replica also moves the counter's row on to the rank of RANK_LEAD_MS
 * ahead of the database's clock, and it gives no rank above the row as that read answered
 * it: a replica whose reads fell behind (or that has not read yet, at its start) waits
 * for one before it ranks, and reads itself, as part of the unit that asked for the rank
 * (its failure then the unit's, and its answer the health check's), when that one failed. So the row is past every rank given, even by a replica killed
 * before it could say what it gave, and a replica of the version before, which numbers
 * its deliveries from that row one at a time, goes on above every delivery made before
 * its own; its deliveries rank as up to RANK_LEAD_MS newer than they are while replicas of
 * both versions run (a rolling upgrade) and after a rollback.
 *
 * A replica that gave no rank since its last read skips its next one: an idle replica
 * writes nothing, and its first delivery after a pause longer than RANK_LEAD_MS waits
 * for a read. Nor does a stopping replica write: the row is already past its ranks. That
 * read often opens a connection, too slow a trip to take an offset from unless the clocks
 * moved apart meanwhile by more than about half of it (see read): until a read of the
 * seconds after (it goes on ranking), the replica ranks by the offset it had, off by what
 * its clock drifted over the pause.
 */
class ClockRanks {
  private last = 0;
  /** The row as the last read left it: no rank above it is given. */
  private ceiling = 0;
  /** The database's clock less the replica's monotonic one; no rank is given before the first read sets it. */
  private offsetMs = 0;
  /** Whether a rank was given since the last read began. */
  private ranked = false;
  /** The shortest round trip an offset was taken from, and how many reads since were too slow to take one from. */
  private bestTripMs = Number.POSITIVE_INFINITY;
  private slowReads = 0;
  private syncing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  /** `db` runs the reads of the replica's own (see PgCounters); `unitDb` those a rank waits for, as a unit's statements. */
  constructor(
    private readonly db: () => Db,
    private readonly unitDb: () => Db,
  ) {}

  /** The next rank, once the row is past it (after a read when it is not). */
  async next(): Promise<number> {
    for (let read = false; ; read = true) {
      const rank = Math.max(this.last + 1, Math.floor((performance.now() + this.offsetMs) * RANKS_PER_MS));
      if (rank <= this.ceiling) {
        this.ranked = true;
        return (this.last = rank);
      }
      if (read) await this.read(this.unitDb());
      else await this.sync().catch(() => this.read(this.unitDb()));
    }
  }

  /** The reads, the first at once (and a second on the connection it opened), then every RANK_SYNC_MS that gave ranks, until `stop`; none delays the start. */
  start(): void {
    void this.sync()
      .then(() => this.sync())
      .catch(() => undefined);
    this.timer = setInterval(() => {
      if (this.ranked) void this.sync().catch(() => undefined);
    }, RANK_SYNC_MS).unref();
  }

  /** Reads the database's clock and moves the row on (one read at a time). */
  sync(): Promise<void> {
    this.syncing ??= this.read(this.db()).finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  /** Stops the reads (the row is past every rank given: nothing to write). */
  stop(): void {
    clearInterval(this.timer);
  }

  private async read(db: Db): Promise<void> {
    this.ranked = false;
    const sent = performance.now();
    const { rows } = await db.query<{ value: string; now_ms: number }>(PUSH_RANKS, [CLOCK_RANKED, this.last, RANK_LEAD_MS]);
    // The database read its clock about half way through the round trip, so an offset is
    // off by at most half of it. One from a trip much slower than the best (a connection
    // opened, a wait for the pool) replaces a better one only when the two cannot both be
    // right (a clock stepped), or after ten such trips in a row.
    const received = performance.now();
    const tripMs = received - sent;
    const offsetMs = rows[0]!.now_ms - (sent + received) / 2;
    const stepped = Math.abs(offsetMs - this.offsetMs) > (tripMs + this.bestTripMs) / 2;
    if (tripMs <= Math.max(2, 2 * this.bestTripMs) || stepped || ++this.slowReads >= 10) {
      this.bestTripMs = stepped ? tripMs : Math.min(this.bestTripMs, tripMs);
      this.offsetMs = offsetMs;
      this.slowReads = 0;
    }
    this.ceiling = Math.max(this.ceiling, Number(rows[0]!.value));
  }
}

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
  private readonly ranks: ClockRanks;

  /** `clockDb` runs the ranks' own clock reads (see ClockRanks), which say nothing of the database's health. */
  constructor(
    private readonly db: () => Db,
    clockDb: () => Db = db,
  ) {
    this.ranks = new ClockRanks(clockDb, db);
  }

  /** Starts reading the database's clock for the delivery log's ranks (see ClockRanks), until close. */
  start(): void {
    this.ranks.start();
  }

  /** The delivery log's rank from the database's clock, without a round trip (see ClockRanks); any other counter's next value. */
  async rank(name: string): Promise<number> {
    return name === CLOCK_RANKED ? await this.ranks.next() : await this.take(name, 1);
  }

  /** Reads the database's clock and moves the ranked row on now, as the replica does every RANK_SYNC_MS that it gives ranks in. */
  syncRanks(): Promise<void> {
    return this.ranks.sync();
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
    this.ranks.stop();
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
