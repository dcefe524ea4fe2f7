/** An entry of a due-job queue: a job's id, its due time, and when it was queued (across every queue). */
export interface DueEntry {
  at: number;
  id: string;
  order: number;
}

/**
 * A binary min-heap of due entries, earliest `at` first, then lowest `order` (the
 * order numbers are unique). Kept as three arrays side by side rather than one object
 * per entry: with a job queued per order in flight, that object and its boxed due time
 * (a time does not fit a small integer) were two heap objects per order for every major
 * GC to mark. Its top is read field by field (`topAt`, `topId`, `topOrder`): a claim
 * looks at every queue's top for each job it takes, and makes no object doing so.
 */
export class DueHeap {
  private readonly ats: number[] = [];
  private readonly ids: string[] = [];
  private readonly orders: number[] = [];

  get size(): number {
    return this.ids.length;
  }

  /** The job ids of every entry, in no particular order. */
  jobIds(): string[] {
    return [...this.ids];
  }

  /** The earliest entry's due time (NaN when empty). */
  topAt(): number {
    return this.ids.length === 0 ? Number.NaN : this.ats[0]!;
  }

  /** The earliest entry's job id (undefined when empty). */
  topId(): string | undefined {
    return this.ids[0];
  }

  /** The earliest entry's queueing order (NaN when empty). */
  topOrder(): number {
    return this.ids.length === 0 ? Number.NaN : this.orders[0]!;
  }

  push(entry: DueEntry): void {
    this.ats.push(entry.at);
    this.ids.push(entry.id);
    this.orders.push(entry.order);
    let i = this.ids.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Removes the earliest entry. */
  pop(): void {
    const last = this.ids.length - 1;
    if (last < 0) return;
    this.swap(0, last);
    this.ats.pop();
    this.ids.pop();
    this.orders.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < last && this.less(l, m)) m = l;
      if (r < last && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }

  private less(a: number, b: number): boolean {
    const x = this.ats[a]!;
    const y = this.ats[b]!;
    return x < y || (x === y && this.orders[a]! < this.orders[b]!);
  }

  private swap(a: number, b: number): void {
    const at = this.ats[a]!;
    this.ats[a] = this.ats[b]!;
    this.ats[b] = at;
    const id = this.ids[a]!;
    this.ids[a] = this.ids[b]!;
    this.ids[b] = id;
    const order = this.orders[a]!;
    this.orders[a] = this.orders[b]!;
    this.orders[b] = order;
  }
}
