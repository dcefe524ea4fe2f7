import type { Order } from '../../records/index.js';
import type { PreReadOrder } from './request-scope.js';

/** How many orders a replica keeps of those its requests read last. */
const KEPT = 1_000;

/**
 * A row version as PostgreSQL tells it apart: the order's `version`, and a stamp of its
 * `xmin` (which every insert and update gives anew) with the server's start (see the read).
 */
interface RowVersion {
  version: number;
  stamp: string;
}

/** What a read says it holds when it holds nothing: no row has version 0. */
const NOTHING: RowVersion = { version: 0, stamp: '' };

/**
 * The orders this replica's requests read last, each with the row version it was read at.
 * A read names the version it holds and is sent the order's data only when the row changed
 * since, so an order read again and again (a client polling its tracking) is neither
 * written out as JSON by PostgreSQL nor parsed here each time. Whichever replica changed
 * the row, the comparison is PostgreSQL's: what is kept is never served stale.
 */
export class RecentOrders {
  private readonly kept = new Map<string, RowVersion & { data: Order }>();

  /** The row version held of the client's order `awb`, for the read to compare. */
  held(clientId: string, awb: string): RowVersion {
    return this.kept.get(keyOf(clientId, awb)) ?? NOTHING;
  }

  /**
   * The order as the read found it (null: none), given the row it was sent (its data null
   * when it is the version held). Undefined when that version is no longer the one kept
   * (another read of the same order replaced it meanwhile): the order is then read again.
   */
  found(clientId: string, awb: string, row: (RowVersion & { data: Order | null }) | undefined): PreReadOrder | undefined {
    const key = keyOf(clientId, awb);
    const kept = this.kept.get(key);
    if (row === undefined) {
      this.kept.delete(key);
      return null;
    }
    if (row.data === null) {
      if (kept?.version !== row.version || kept.stamp !== row.stamp) return undefined;
      // The last read first out: a hit moves to the end.
      this.kept.delete(key);
      this.kept.set(key, kept);
      return { data: kept.data, version: kept.version };
    }
    this.kept.delete(key);
    this.kept.set(key, { data: row.data, version: row.version, stamp: row.stamp });
    if (this.kept.size > KEPT) this.kept.delete(this.kept.keys().next().value!);
    return { data: row.data, version: row.version };
  }
}

const keyOf = (clientId: string, awb: string): string => `${clientId}\u0000${awb}`;
