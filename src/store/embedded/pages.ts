import { encodeCursor, positionOf } from '../cursor.js';
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
  /** The record as kept, enough to filter it and place it. */
  load(id: string): R | undefined;
  keep(record: R): boolean;
  positionOf(record: R): { rank: number; id: string };
  /** The record as the port gives it, for those on the page only. */
  open(record: R): Stored<T>;
}

/** A page of a client's listing: records newest first after the cursor that pass `keep`; `total` counts every match. */
export function pageOf<T, R>(listing: Listing<T, R>): Page<Stored<T>> {
  const { keys, limit } = listing;
  const from = positionOf(listing.cursor);
  const items: R[] = [];
  let more = false;
  for (const key of keys?.newestFirst(from) ?? []) {
    const record = listing.load(key);
    if (!record || !listing.keep(record)) continue;
    if (items.length === limit) {
      more = true;
      break;
    }
    items.push(record);
  }
  let total = keys?.size ?? 0;
  if (listing.counted === false) total = -1;
  else if (listing.filtered) {
    total = 0;
    for (const key of keys?.newestFirst() ?? []) {
      const record = listing.load(key);
      if (record && listing.keep(record)) total += 1;
    }
  }
  const last = items[items.length - 1];
  return { items: items.map((record) => listing.open(record)), next_cursor: more && last ? encodeCursor(listing.positionOf(last)) : null, total };
}
