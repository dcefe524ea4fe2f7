import type { Position } from '../cursor.js';

/**
 * One client's records in listing order, oldest first, so that the usual insert (the
 * newest) is an append. Listings read it backwards from a cursor: their cost depends
 * on this client's records and the page, never on other clients'.
 *
 * Kept as two arrays side by side, the ranks (numbers, which V8 stores unboxed in an
 * array of numbers) and the ids (the strings the records already hold), rather than one
 * `{ rank, id }` object per entry: that object and its boxed rank (a creation time does
 * not fit a small integer) were two heap objects per entry, three entries per created
 * order, that every major GC had to mark.
 */
export class SortedKeys {
  private readonly ranks: number[] = [];
  private readonly ids: string[] = [];

  get size(): number {
    return this.ids.length;
  }

  add(position: Position): void {
    const at = this.indexAfter(position);
    if (at === this.ids.length) {
      this.ranks.push(position.rank);
      this.ids.push(position.id);
    } else {
      this.ranks.splice(at, 0, position.rank);
      this.ids.splice(at, 0, position.id);
    }
  }

  remove(position: Position): void {
    const at = this.indexAfter(position) - 1;
    if (at >= 0 && this.ids[at] === position.id) {
      this.ranks.splice(at, 1);
      this.ids.splice(at, 1);
    }
  }

  /** Ids newest first, starting after `cursor` (exclusive) when given. */
  *newestFirst(cursor?: Position): Generator<string> {
    let start = this.ids.length - 1;
    if (cursor) {
      start = this.indexAfter(cursor) - 1;
      if (this.ids[start] === cursor.id) start -= 1;
    }
    for (let i = start; i >= 0; i--) yield this.ids[i]!;
  }

  /** Ids oldest first. */
  *oldestFirst(): Generator<string> {
    for (const id of this.ids) yield id;
  }

  /** Whether the entry at `i` comes before `position`. */
  private before(i: number, position: Position): boolean {
    const rank = this.ranks[i]!;
    return rank < position.rank || (rank === position.rank && this.ids[i]! < position.id);
  }

  /** The index of the first item after `position` (binary search). */
  private indexAfter(position: Position): number {
    let lo = 0;
    let hi = this.ids.length;
    if (hi > 0 && this.before(hi - 1, position)) return hi;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.after(mid, position)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Whether the entry at `i` comes after `position`. */
  private after(i: number, position: Position): boolean {
    const rank = this.ranks[i]!;
    return position.rank < rank || (position.rank === rank && position.id < this.ids[i]!);
  }
}
