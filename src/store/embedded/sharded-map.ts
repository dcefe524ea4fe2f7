/** Shards per map: each holds this fraction of the keys, and its growth step copies no more than that. */
const SHARDS = 256;

/** A well-mixed 32-bit hash of a string (FNV-1a, then a final avalanche): shards fill evenly whatever the keys look like. */
function shardOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  return h & (SHARDS - 1);
}

/**
 * A Map of string keys split over many small Maps by a hash of the key. A Map grows by
 * rehashing every entry into a table twice as big, in one go: for an index that grows
 * with the orders, that one `set` holds the event loop longer at each doubling. A shard
 * holds 1/256 of the keys, so no single insert copies more than that.
 *
 * @example
 * const byAwb = new ShardedMap<string>();
 * byAwb.set('JN0000000001', '500000000001');
 * byAwb.get('JN0000000001'); // '500000000001'
 */
export class ShardedMap<V> {
  private readonly shards: Array<Map<string, V>> = Array.from({ length: SHARDS }, () => new Map<string, V>());
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    return this.shards[shardOf(key)]!.get(key);
  }

  has(key: string): boolean {
    return this.shards[shardOf(key)]!.has(key);
  }

  set(key: string, value: V): this {
    const shard = this.shards[shardOf(key)]!;
    const before = shard.size;
    shard.set(key, value);
    this.count += shard.size - before;
    return this;
  }

  delete(key: string): boolean {
    const deleted = this.shards[shardOf(key)]!.delete(key);
    if (deleted) this.count -= 1;
    return deleted;
  }
}
