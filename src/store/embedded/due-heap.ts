/** An entry of a due-job queue: a job's id, its due time, and when it was queued (across every queue). */
export interface DueEntry {
  at: number;
  id: string;
  order: number;
}

/** Entries per chunk of the heap's arrays. */
const CHUNK_BITS = 12;
export const DUE_HEAP_CHUNK = 1 << CHUNK_BITS;
const MASK = DUE_HEAP_CHUNK - 1;

/**
 * A binary min-heap of due entries, earliest `at` first, then lowest `order` (the
 * order numbers are unique). Kept as three arrays side by side rather than one object
 * per entry: with a job queued per order in flight, that object and its boxed due time
 * (a time does not fit a small integer) would be two heap objects per order for every
 * major GC to mark. Its top is read field by field (`topAt`, `topId`, `topOrder`): a claim
 * looks at every queue's top for each job it takes, and makes no object doing so.
 *
 * The arrays are in chunks of 4,096 entries: a queue holds a job per order in flight
 * (each order's next tracking step), and one array per field would copy all of its
 * entries in the push that grows it, a stall that grows with the orders.
 */
export class DueHeap {
  private readonly ats: number[][] = [];
  private readonly ids: string[][] = [];
  private readonly orders: number[][] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The job ids of every entry, in no particular order. */
  jobIds(): string[] {
    return this.ids.flat();
  }

  /** The earliest entry's due time (NaN when empty). */
  topAt(): number {
    return this.count === 0 ? Number.NaN : this.ats[0]![0]!;
  }

  /** The earliest entry's job id (undefined when empty). */
  topId(): string | undefined {
    return this.count === 0 ? undefined : this.ids[0]![0];
  }

  /** The earliest entry's queueing order (NaN when empty). */
  topOrder(): number {
    return this.count === 0 ? Number.NaN : this.orders[0]![0]!;
  }

  push(entry: DueEntry): void {
    this.append(entry.at, entry.id, entry.order);
    let i = this.count - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /**
   * Keeps only the entries `keep` accepts (with `oncePerId`, one per job id: the one
   * queued first, as a job written again at its due time is queued again), in heap order
   * again, in one pass over them (O(n)): for a heap whose dead entries outnumber its live
   * ones (see JobIndex).
   */
  retain(keep: (id: string, at: number) => boolean, oncePerId = false): void {
    const { ats, ids, orders } = this;
    const keptAt = oncePerId ? new Map<string, number>() : undefined;
    let kept = 0;
    for (let i = 0; i < this.count; i++) {
      const c = i >>> CHUNK_BITS, j = i & MASK;
      const id = ids[c]![j]!, at = ats[c]![j]!, order = orders[c]![j]!;
      if (!keep(id, at)) continue;
      const twin = keptAt?.get(id);
      if (twin !== undefined) {
        if (orders[twin >>> CHUNK_BITS]![twin & MASK]! > order) this.put(twin, at, id, order);
        continue;
      }
      if (kept !== i) this.put(kept, at, id, order);
      keptAt?.set(id, kept);
      kept += 1;
    }
    const chunks = kept === 0 ? 0 : ((kept - 1) >>> CHUNK_BITS) + 1;
    for (const fields of [ats, ids, orders]) {
      fields.length = chunks;
      if (chunks > 0) fields[chunks - 1]!.length = kept - ((chunks - 1) << CHUNK_BITS);
    }
    this.count = kept;
    for (let i = (kept >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  private put(i: number, at: number, id: string, order: number): void {
    const c = i >>> CHUNK_BITS, j = i & MASK;
    this.ats[c]![j] = at;
    this.ids[c]![j] = id;
    this.orders[c]![j] = order;
  }

  /** Removes the earliest entry. */
  pop(): void {
    const last = this.count - 1;
    if (last < 0) return;
    this.swap(0, last);
    const chunk = this.ids.length - 1;
    this.ats[chunk]!.pop();
    this.ids[chunk]!.pop();
    this.orders[chunk]!.pop();
    if (this.ids[chunk]!.length === 0) {
      this.ats.pop();
      this.ids.pop();
      this.orders.pop();
    }
    this.count = last;
    this.siftDown(0);
  }

  /** Adds an entry at the end of the arrays, not yet in its place. */
  private append(at: number, id: string, order: number): void {
    if ((this.count & MASK) === 0) {
      this.ats.push([]);
      this.ids.push([]);
      this.orders.push([]);
    }
    const last = this.ids.length - 1;
    this.ats[last]!.push(at);
    this.ids[last]!.push(id);
    this.orders[last]!.push(order);
    this.count += 1;
  }

  /** Moves the entry at `i` down to its place below. */
  private siftDown(i: number): void {
    const size = this.count;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && this.less(l, m)) m = l;
      if (r < size && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private less(a: number, b: number): boolean {
    const x = this.ats[a >>> CHUNK_BITS]![a & MASK]!;
    const y = this.ats[b >>> CHUNK_BITS]![b & MASK]!;
    return x < y || (x === y && this.orders[a >>> CHUNK_BITS]![a & MASK]! < this.orders[b >>> CHUNK_BITS]![b & MASK]!);
  }

  private swap(a: number, b: number): void {
    const ca = a >>> CHUNK_BITS, ia = a & MASK, cb = b >>> CHUNK_BITS, ib = b & MASK;
    const ats = this.ats, ids = this.ids, orders = this.orders;
    const at = ats[ca]![ia]!;
    ats[ca]![ia] = ats[cb]![ib]!;
    ats[cb]![ib] = at;
    const id = ids[ca]![ia]!;
    ids[ca]![ia] = ids[cb]![ib]!;
    ids[cb]![ib] = id;
    const order = orders[ca]![ia]!;
    orders[ca]![ia] = orders[cb]![ib]!;
    orders[cb]![ib] = order;
  }
}
