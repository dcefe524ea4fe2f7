import type { Position } from '../cursor.js';

const before = (a: Position, b: Position): boolean => a.rank < b.rank || (a.rank === b.rank && a.id < b.id);

/**
 * One client's records in listing order, oldest first, so that the usual insert (the
 * newest) is an append. Listings read it backwards from a cursor: their cost depends
 * on this client's records and the page, never on other clients'.
 */
export class SortedKeys {
  private readonly items: Position[] = [];

  get size(): number {
    return this.items.length;
  }

  add(position: Position): void {
    const at = this.indexAfter(position);
    this.items.splice(at, 0, position);
  }

  remove(position: Position): void {
    const at = this.indexAfter(position) - 1;
    if (at >= 0 && this.items[at]!.id === position.id) this.items.splice(at, 1);
  }

  /** Ids newest first, starting after `cursor` (exclusive) when given. */
  *newestFirst(cursor?: Position): Generator<string> {
    let start = this.items.length - 1;
    if (cursor) {
      start = this.indexAfter(cursor) - 1;
      if (this.items[start]?.id === cursor.id) start -= 1;
    }
    for (let i = start; i >= 0; i--) yield this.items[i]!.id;
  }

  /** Ids oldest first. */
  *oldestFirst(): Generator<string> {
    for (const item of this.items) yield item.id;
  }

  /** The index of the first item after `position` (binary search). */
  private indexAfter(position: Position): number {
    let lo = 0;
    let hi = this.items.length;
    if (hi > 0 && before(this.items[hi - 1]!, position)) return hi;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (before(position, this.items[mid]!)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
