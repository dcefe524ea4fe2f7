/** A binary min-heap ordered by `at`, then by insertion order. */
export class MinHeap<T extends { at: number }> {
  private readonly items: Array<T & { seq: number }> = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  /** Every item, in no particular order. */
  values(): T[] {
    return [...this.items];
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    // Not `{ ...item, seq }`: see copyWith in store/embedded/records.ts (a hidden class per entry).
    this.items.push(Object.assign(Object.assign({}, item), { seq: this.seq++ }));
    let i = this.items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): T | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (top === undefined || last === undefined || this.items.length === 0) return top;
    this.items[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.items.length && this.less(l, m)) m = l;
      if (r < this.items.length && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return top;
  }

  private less(a: number, b: number): boolean {
    const x = this.items[a]!;
    const y = this.items[b]!;
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    [this.items[a], this.items[b]] = [this.items[b]!, this.items[a]!];
  }
}
