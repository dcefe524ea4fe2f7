import { encodeCursor, positionOf, type Position } from '../cursor.js';
import { SLICE_MS, letRequestsIn } from '../../shared/index.js';
import type { SortedKeys } from './sorted-keys.js';
import type { Page, Stored } from '../../records/index.js';

/** How one listing reads its records: where its keys are, what it keeps, how a record is placed and handed out. */
export interface Listing<T, R = Stored<T>> {
  keys: SortedKeys | undefined;
  cursor: string | undefined;
  limit: number;
  /** False when the query has no filter: then the total is the number of keys and the scan stops at the page. */
  filtered: boolean;
  /** False: no total is counted (-1), so a filtered page costs only its own scan. */
  counted?: boolean;
  /**
   * True when the listing may let the event loop go between slices of its scan (a read
   * outside a unit of work); a unit's own reads scan in one go, as its writes wait for them.
   */
  sliced: boolean;
  /** What the scan awaits between its slices (see OrderQuery.between); by default letRequestsIn. */
  between?: () => Promise<void>;
  /** The record as kept, enough to filter it and place it. */
  load(id: string): R | undefined;
  keep(record: R): boolean;
  positionOf(record: R): { rank: number; id: string };
  /** The record as the port gives it, for those on the page only. */
  open(record: R): Stored<T>;
}

/** Entries a scan visits between two looks at the time it has taken. */
const LOOK_EVERY = 1024;

/**
 * A page of a client's listing: records newest first after the cursor that pass `keep`;
 * `total` counts every match. A filtered, counted listing is one scan of every key, newest
 * first: it counts the matches and takes the page's records once past the cursor. A scan
 * of many keys (a client's 200,000 orders, read in a tenth of a second or more) goes in
 * slices of SLICE_MS, letting other clients' requests in between (in their turns, when
 * the listing is a request's: see OrderQuery.between); each slice starts after the entry
 * the last one stopped at, so keys added or removed in between are seen as they are then.
 */
export async function pageOf<T, R>(listing: Listing<T, R>): Promise<Page<Stored<T>>> {
  const { keys, limit } = listing;
  const from = positionOf(listing.cursor);
  const counting = listing.filtered && listing.counted !== false;
  const items: R[] = [];
  let more = false;
  let total = 0;
  // Counting, the scan starts at the newest key and takes the page once past the cursor.
  let past = !counting || from === undefined;
  const isPast = (rank: number, id: string): boolean => rank < from!.rank || (rank === from!.rank && id < from!.id);
  let deadline = performance.now() + SLICE_MS;
  let seen = 0;
  let outOfTime = false;
  const visit = (id: string, rank: number): boolean => {
    if (!past) past = isPast(rank, id);
    const record = listing.load(id);
    if (record && listing.keep(record)) {
      if (counting) total += 1;
      if (past && items.length < limit) items.push(record);
      else if (past) {
        more = true;
        if (!counting) return false;
      }
    }
    seen += 1;
    if (listing.sliced && seen % LOOK_EVERY === 0 && performance.now() > deadline) outOfTime = true;
    return !outOfTime;
  };
  let at: Position | undefined = counting ? undefined : from;
  let sliced = false;
  for (;;) {
    at = keys?.scanNewestFirst(at, visit);
    if (!outOfTime || at === undefined) break;
    sliced = true;
    await (listing.between ?? letRequestsIn)();
    outOfTime = false;
    deadline = performance.now() + SLICE_MS;
  }
  if (!listing.filtered) total = keys?.size ?? 0;
  if (listing.counted === false) total = -1;
  const last = items[items.length - 1];
  const next_cursor = more && last ? encodeCursor(listing.positionOf(last)) : null;
  // Taken in earlier slices, the page's records are read again as they are now: one removed or changed past the filter since is
  // left out (and not counted), so a page may hold fewer than `limit`; next_cursor still goes on after the last one taken.
  const page = sliced ? current(listing, items) : items;
  if (counting) total -= items.length - page.length;
  return { items: page.map((record) => listing.open(record)), next_cursor, total };
}

/** The records as the listing reads them now, those that still pass its filter. */
function current<T, R>(listing: Listing<T, R>, records: R[]): R[] {
  const now: R[] = [];
  for (const record of records) {
    const again = listing.load(listing.positionOf(record).id);
    if (again && listing.keep(again)) now.push(again);
  }
  return now;
}
