import { describe, expect, it } from 'vitest';
import { ShardedMap } from '../../src/store/embedded/sharded-map.js';

describe('ShardedMap', () => {
  it('answers what was set, overwritten and deleted, and counts distinct keys', () => {
    const map = new ShardedMap<number>();
    for (let n = 0; n < 10_000; n++) map.set(`JN${String(n).padStart(10, '0')}`, n);
    map.set('JN0000000007', -7);
    expect(map.size).toBe(10_000);
    expect(map.get('JN0000000007')).toBe(-7);
    expect(map.get('JN0000009999')).toBe(9_999);
    expect(map.delete('JN0000000007')).toBe(true);
    expect(map.delete('JN0000000007')).toBe(false);
    expect(map.has('JN0000000007')).toBe(false);
    expect(map.get('JN0000000007')).toBeUndefined();
    expect(map.size).toBe(9_999);
  });

  it('spreads keys that differ only in one digit over its shards, so no shard grows like one big Map', () => {
    const map = new ShardedMap<true>();
    for (let n = 0; n < 256_000; n++) map.set(`5${String(n).padStart(11, '0')}`, true);
    const shards = (map as unknown as { shards: Array<Map<string, true>> }).shards;
    const sizes = shards.map((shard) => shard.size);
    // Even spread: 1,000 each; a shard with twice that would rehash twice as much at once.
    expect(Math.max(...sizes)).toBeLessThan(1_200);
    expect(Math.min(...sizes)).toBeGreaterThan(800);
  });
});
