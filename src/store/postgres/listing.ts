import type { Page, Stored } from '../../records/index.js';
import type { Position } from '../cursor.js';
import type { Db } from './db.js';
import { pageOf } from './rows.js';
import type { Where } from './where.js';

/** A listing of one table: its filters, and the page of it after the cursor. */
export interface Listing<T> {
  table: 'orders' | 'deliveries';
  /** The filters alone: what the total counts. Its values are the first of `page`'s. */
  filters: { sql: string };
  /** The filters and the cursor's condition: what the page shows. */
  page: Where;
  /** The two columns the listing is ordered on (descending), ranked first, then the id. */
  order: readonly [string, string];
  limit: number;
  /** False: no total (-1), and no count is made. */
  total: boolean;
  position: (record: Stored<T>) => Position;
}

/**
 * A page of a listing and its total in one statement, one round trip: the count of the
 * filtered rows joined to the page's rows (none on the page: one row with the total
 * alone, its `data` null). A page and a count sent one after the other waited for two
 * answers, and every listing shows its total.
 */
export function listPage<T>(db: Db, listing: Listing<T>): Promise<Page<Stored<T>>> {
  return db.heavy ? db.heavy(() => readPage(db, listing)) : readPage(db, listing);
}

async function readPage<T>(db: Db, listing: Listing<T>): Promise<Page<Stored<T>>> {
  const [rank, id] = listing.order;
  const rows = `SELECT data, version, ${rank} AS rank_, ${id} AS id_ FROM ${listing.table} ${listing.page.sql} ORDER BY ${rank} DESC, ${id} DESC LIMIT ${listing.limit + 1}`;
  if (!listing.total) {
    const { rows: page } = await db.query<{ data: unknown; version: number }>(rows, listing.page.values);
    return pageOf<T>(page, listing.limit, -1, listing.position);
  }
  const { rows: joined } = await db.query<{ total: string; data: unknown; version: number }>(
    `SELECT counted.total, page.data, page.version FROM (SELECT count(*) AS total FROM ${listing.table} ${listing.filters.sql}) AS counted
     LEFT JOIN LATERAL (${rows}) AS page ON true ORDER BY page.rank_ DESC, page.id_ DESC`,
    listing.page.values,
  );
  const page = joined.filter((row) => row.data !== null);
  return pageOf<T>(page, listing.limit, Number(joined[0]?.total ?? 0), listing.position);
}
