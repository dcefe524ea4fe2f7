/** Shards of the key lookup: each holds this fraction of the keys, and its growth step copies no more than that. */
export const RECORD_SHARDS = 256;
const SHARDS = RECORD_SHARDS;
/** Slots per chunk of the insertion log. */
const CHUNK_BITS = 12;
export const RECORD_CHUNK = 1 << CHUNK_BITS;
const CHUNK = RECORD_CHUNK;

/**
 * The shard of a key, from its last six characters, mixed (FNV-1a steps, then an
 * avalanche): the store's keys end in counters or in permuted numbers, whose endings
 * spread evenly, and hashing six characters rather than the whole key keeps a look-up
 * close to a Map's. Keys that share their ending only share a shard: that shard is then
 * a plain Map, which is what the whole collection was before. A collection keyed by
 * partner input would want the whole key hashed (as `ShardedMap` does), so that nobody
 * can put every key in one shard.
 */
export function shardOf(key: string): number {
  const n = key.length;
  let h = 0x811c9dc5 ^ n;
  for (let i = n > 6 ? n - 6 : 0; i < n; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h & (SHARDS - 1);
}

/** The chunk number of a slot: a shift while slots fit 31 bits, a division past that (slot numbers keep counting up with the inserts). */
const chunkOf = (slot: number): number => (slot < 0x80000000 ? slot >>> CHUNK_BITS : Math.floor(slot / CHUNK));

/** A chunk shorter than this is never compacted: its holes cost less than the moves. */
const COMPACT_MIN = 64;

/**
 * A collection of the store in memory: string keys to records, listed in the order the
 * keys were first put (as a Map lists them, which the data file's order and the jobs'
 * tie order rely on).
 *
 * A Map grows by rehashing every entry into a table twice the size, in one `set`, which
 * holds the event loop for a time that doubles with each doubling of a big collection
 * (its requests wait behind that one `set`). Here the key
 * lookup is split over 256 small Maps (each maps a key to its slot: chunk and place in
 * it), and the records sit in an insertion log of chunks of up to 4,096 slots (a key and
 * a value per slot), so no single `set` copies more than a 256th of the keys or one chunk.
 *
 * A key put again after a delete takes a new slot at the end, as in a Map; a deleted
 * record leaves an empty slot. So the log does not grow with every insert ever made (a
 * collection that churns, as jobs do, with a few long-lived records among the churn
 * would keep a whole chunk per long-lived record): a chunk behind the last one is
 * compacted in place, in order, once half its slots are empty (its records' slots move
 * within it: at most one chunk's work per delete, once per as many deletes); a chunk with
 * no record left is let go; empty slots at the end of the last chunk are handed out
 * again. The slots held stay under twice the records plus 64 per chunk and one chunk,
 * and the log's list of chunks spans from the oldest chunk with a record to the newest
 * (an entry per 4,096 inserts in between).
 *
 * @example
 * const orders = new RecordMap();
 * orders.set('500000000001', { order_no: '500000000001' });
 * [...orders.keys()]; // ['500000000001']
 */
export class RecordMap<V = unknown> {
  readonly #shards: Array<Map<string, number>> = Array.from({ length: SHARDS }, () => new Map<string, number>());
  /** Keys by slot, in chunks; a chunk let go is null. An empty slot holds undefined. */
  readonly #keys: Array<Array<string | undefined> | null> = [];
  readonly #values: Array<Array<V | undefined> | null> = [];
  /** Records per chunk. */
  readonly #live: number[] = [];
  /** The number of the chunk at index 0 (chunks let go at the front are dropped from the arrays). */
  #base = 0;
  #size = 0;

  constructor(entries?: Iterable<readonly [string, V]>) {
    if (entries) for (const [key, value] of entries) this.set(key, value);
  }

  get size(): number {
    return this.#size;
  }

  /** Slots the log holds, records and empty ones (the longer of a chunk's keys and values): what its memory is in proportion to. */
  get slots(): number {
    let held = 0;
    for (let c = 0; c < this.#keys.length; c++) held += Math.max(this.#keys[c]?.length ?? 0, this.#values[c]?.length ?? 0);
    return held;
  }

  get(key: string): V | undefined {
    const slot = this.#shards[shardOf(key)]!.get(key);
    if (slot === undefined) return undefined;
    const chunk = chunkOf(slot);
    return this.#values[chunk - this.#base]![slot - chunk * CHUNK];
  }

  has(key: string): boolean {
    return this.#shards[shardOf(key)]!.has(key);
  }

  set(key: string, value: V): this {
    const shard = this.#shards[shardOf(key)]!;
    const slot = shard.get(key);
    if (slot !== undefined) {
      const chunk = chunkOf(slot);
      this.#values[chunk - this.#base]![slot - chunk * CHUNK] = value;
      return this;
    }
    let at = this.#keys.length - 1;
    if (at < 0 || this.#keys[at]!.length === CHUNK) {
      this.#keys.push([]);
      this.#values.push([]);
      this.#live.push(0);
      // The full chunk is now behind the new one: the holes its deletes left are dealt with as after a delete behind the last.
      if (at >= 0) this.#tidy(at);
      at = this.#keys.length - 1;
    }
    const keys = this.#keys[at]!;
    shard.set(key, (this.#base + at) * CHUNK + keys.length);
    keys.push(key);
    this.#values[at]!.push(value);
    this.#live[at]! += 1;
    this.#size += 1;
    return this;
  }

  delete(key: string): boolean {
    const shard = this.#shards[shardOf(key)]!;
    const slot = shard.get(key);
    if (slot === undefined) return false;
    shard.delete(key);
    this.#size -= 1;
    const chunk = chunkOf(slot);
    const at = chunk - this.#base;
    const keys = this.#keys[at]!;
    const values = this.#values[at]!;
    keys[slot - chunk * CHUNK] = undefined;
    values[slot - chunk * CHUNK] = undefined;
    this.#live[at]! -= 1;
    if (at === this.#keys.length - 1) {
      // The last chunk takes new slots: empty ones at its end (a put rolled back, say) are handed out again.
      while (keys.length > 0 && keys[keys.length - 1] === undefined) {
        keys.pop();
        values.pop();
      }
    } else this.#tidy(at);
    return true;
  }

  /** The keys in insertion order, as a new array (one pass over the slots, no entry objects). */
  keyList(): string[] {
    return this.#list(this.#keys);
  }

  /**
   * The keys as they are now, in insertion order, as copies of the log's chunks (an empty
   * slot is undefined), with no one array the size of the collection: about the work of
   * `keyList`, in pieces the size of a chunk. For a reader that goes through them over
   * time (a checkpoint).
   */
  keySnapshot(): Array<ReadonlyArray<string | undefined>> {
    const snapshot: Array<ReadonlyArray<string | undefined>> = [];
    for (const keys of this.#keys) if (keys !== null) snapshot.push(keys.slice());
    return snapshot;
  }

  /**
   * The keys and records, a chunk of the log at a time, each copied as the reader asks for
   * it (an empty slot is undefined in both): the chunks there were at the first call, so
   * records put later into a new chunk are left out. For a reader that goes through them
   * over time (a checkpoint): it looks no record up, and holds no more than one chunk of
   * records that have been replaced since.
   */
  *entryChunks(): Generator<{ keys: ReadonlyArray<string | undefined>; values: ReadonlyArray<V | undefined> }> {
    const first = this.#base;
    const last = this.#base + this.#keys.length - 1;
    for (let chunk = first; chunk <= last; chunk++) {
      // Chunks let go at the front since are gone from the arrays: #base moved past them.
      const at = chunk - this.#base;
      if (at < 0) continue;
      const keys = this.#keys[at];
      if (keys === null || keys === undefined) continue;
      yield { keys: keys.slice(), values: this.#values[at]!.slice() };
    }
  }

  /** The records in insertion order, as a new array. */
  valueList(): V[] {
    return this.#list(this.#values);
  }

  keys(): IterableIterator<string> {
    return this.keyList()[Symbol.iterator]();
  }

  values(): IterableIterator<V> {
    return this.valueList()[Symbol.iterator]();
  }

  entries(): IterableIterator<[string, V]> {
    const values = this.valueList();
    return this.keyList().map((key, i): [string, V] => [key, values[i]!])[Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }

  /** The filled slots of `chunks` (the keys' or the values'), in order. */
  #list<T>(chunks: Array<Array<T | undefined> | null>): T[] {
    const list = new Array<T>(this.#size);
    let n = 0;
    for (let c = 0; c < chunks.length; c++) {
      const keys = this.#keys[c];
      if (keys === null || keys === undefined) continue;
      const slots = chunks[c]!;
      for (let i = 0; i < keys.length; i++) if (keys[i] !== undefined) list[n++] = slots[i] as T;
    }
    return list;
  }

  /**
   * A chunk behind the last, after a delete in it (or as it stops being the last): let go
   * when it holds no record (and, at the front, dropped from the arrays), compacted when
   * half its slots are empty.
   */
  #tidy(at: number): void {
    const keys = this.#keys[at]!;
    const live = this.#live[at]!;
    if (live === 0) {
      this.#keys[at] = null;
      this.#values[at] = null;
      while (this.#keys.length > 1 && this.#keys[0] === null) {
        this.#keys.shift();
        this.#values.shift();
        this.#live.shift();
        this.#base += 1;
      }
    } else if (keys.length >= COMPACT_MIN && live * 2 <= keys.length) this.#compact(at);
  }

  /** Moves a chunk's records to the front of it, in order, dropping its empty slots. */
  #compact(at: number): void {
    const keys = this.#keys[at]!;
    const values = this.#values[at]!;
    const first = (this.#base + at) * CHUNK;
    let to = 0;
    for (let from = 0; from < keys.length; from++) {
      const key = keys[from];
      if (key === undefined) continue;
      if (to !== from) {
        keys[to] = key;
        values[to] = values[from];
        this.#shards[shardOf(key)]!.set(key, first + to);
      }
      to += 1;
    }
    keys.length = to;
    values.length = to;
  }
}
