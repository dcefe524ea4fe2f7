/**
 * Items in order, at most `size` of them, the oldest dropped first. Appending and
 * dropping take constant time (amortized): dropped slots are cleared, and the array is
 * compacted once as many slots are dead as the log keeps, instead of shifting every
 * kept item on each drop (a `splice(0, 1)` of a thousand entries per request).
 *
 * @example
 * const log = new BoundedLog<number>(2);
 * log.add(1); log.add(2); log.add(3);
 * log.toArray(); // [2, 3]
 */
export class BoundedLog<T> {
  private items: Array<T | undefined> = [];
  /** Index of the oldest kept item; the slots before it are dead. */
  private start = 0;

  constructor(readonly size: number) {}

  get length(): number {
    return this.items.length - this.start;
  }

  /**
   * Adds `item` after the last kept item it does not belong before (`before(kept)`:
   * true while `item` belongs before `kept`); by default at the end. Then drops the
   * oldest beyond `size` (which may be `item` itself, when it belongs before them all).
   */
  add(item: T, before?: (kept: T) => boolean): void {
    let at = this.items.length;
    if (before) while (at > this.start && before(this.items[at - 1] as T)) at--;
    if (at === this.items.length) this.items.push(item);
    else this.items.splice(at, 0, item);
    const excess = this.length - this.size;
    for (let n = 0; n < excess; n++) this.items[this.start++] = undefined;
    if (this.start > 0 && this.start >= this.size) this.compact();
  }

  /** The kept items, oldest first, as a new array. */
  toArray(): T[] {
    return this.items.slice(this.start) as T[];
  }

  /** The kept items that pass `keep`, oldest first. */
  filter(keep: (item: T) => boolean): T[] {
    const kept: T[] = [];
    for (let i = this.start; i < this.items.length; i++) {
      const item = this.items[i] as T;
      if (keep(item)) kept.push(item);
    }
    return kept;
  }

  /** Drops every item that fails `keep`; returns how many were dropped. */
  retain(keep: (item: T) => boolean): number {
    const kept = this.filter(keep);
    const dropped = this.length - kept.length;
    this.items = kept;
    this.start = 0;
    return dropped;
  }

  private compact(): void {
    this.items = this.items.slice(this.start);
    this.start = 0;
  }
}
