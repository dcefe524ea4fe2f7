import { describe, expect, it } from 'vitest';
import { RECORD_CHUNK, RECORD_SHARDS, RecordMap, shardOf } from '../../src/store/record-map.js';

/** A small seeded generator (mulberry32): the same operations on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const orderNo = (i: number): string => String(500_000_000_000 + i);

describe('a store collection (RecordMap)', () => {
  it('finds records by key and lists them in the order their keys were first put', () => {
    const records = new RecordMap<{ n: number }>();
    records.set('b', { n: 1 }).set('a', { n: 2 }).set('c', { n: 3 });
    records.set('a', { n: 4 }); // an update keeps its place
    expect(records.get('a')).toEqual({ n: 4 });
    expect(records.get('z')).toBeUndefined();
    expect(records.has('c')).toBe(true);
    expect(records.size).toBe(3);
    expect([...records.keys()]).toEqual(['b', 'a', 'c']);
    expect([...records.values()]).toEqual([{ n: 1 }, { n: 4 }, { n: 3 }]);
    expect(Object.fromEntries(records)).toEqual({ b: { n: 1 }, a: { n: 4 }, c: { n: 3 } });
  });

  it('puts a key deleted and put again at the end, as a Map does, and lists it once', () => {
    const records = new RecordMap<number>([['a', 1], ['b', 2], ['c', 3]]);
    expect(records.delete('a')).toBe(true);
    expect(records.delete('a')).toBe(false);
    records.set('a', 4);
    expect([...records.entries()]).toEqual([['b', 2], ['c', 3], ['a', 4]]);
    expect(records.size).toBe(3);
  });

  it('hands the last slot out again when its record is deleted (a put rolled back), without a hole', () => {
    const records = new RecordMap<number>([['a', 1]]);
    records.set('b', 2);
    records.delete('b');
    records.set('c', 3);
    records.set('b', 5);
    expect([...records.keys()]).toEqual(['a', 'c', 'b']);
  });

  it('agrees with a Map over many keys and random puts, updates and deletes across chunks', () => {
    const next = random(15);
    const records = new RecordMap<number>();
    const expected = new Map<string, number>();
    for (let step = 0; step < 60_000; step++) {
      const key = orderNo(Math.floor(next() * 20_000));
      const roll = next();
      if (roll < 0.6) {
        records.set(key, step);
        expected.set(key, step);
      } else if (roll < 0.9) {
        expect(records.delete(key)).toBe(expected.delete(key));
      } else {
        expect(records.get(key)).toBe(expected.get(key));
      }
    }
    expect(records.size).toBe(expected.size);
    expect([...records.entries()]).toEqual([...expected.entries()]);
    expect(records.keyList()).toEqual([...expected.keys()]);
  });

  it('lets go of the chunks whose records were all deleted (retention takes the oldest)', () => {
    const records = new RecordMap<number>();
    const total = RECORD_CHUNK * 5;
    for (let i = 0; i < total; i++) records.set(orderNo(i), i);
    expect(records.chunks).toBe(5);
    for (let i = 0; i < RECORD_CHUNK * 3; i++) records.delete(orderNo(i));
    expect(records.chunks).toBe(2);
    expect(records.size).toBe(RECORD_CHUNK * 2);
    expect(records.keyList()[0]).toBe(orderNo(RECORD_CHUNK * 3));
    for (let i = RECORD_CHUNK * 3; i < total; i++) records.delete(orderNo(i));
    expect(records.size).toBe(0);
    expect(records.keyList()).toEqual([]);
    records.set('again', 1);
    expect([...records.entries()]).toEqual([['again', 1]]);
  });

  it.each([
    ['order numbers', (i: number) => orderNo(i)],
    ['job keys', (i: number) => `awb:${orderNo(i)}`],
    ['delivery ids', (i: number) => `d${i}`],
  ])('spreads %s evenly over its shards (no growth step copies more than a few times 1/256 of them)', (_name, keyOf) => {
    const sizes = new Array<number>(RECORD_SHARDS).fill(0);
    for (let i = 0; i < 100_000; i++) sizes[shardOf(keyOf(i))]! += 1;
    expect(Math.max(...sizes)).toBeLessThan((2 * 100_000) / RECORD_SHARDS);
    expect(Math.min(...sizes)).toBeGreaterThan(100_000 / RECORD_SHARDS / 2);
  });
});
