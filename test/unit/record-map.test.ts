import { describe, expect, it } from 'vitest';
import { RECORD_CHUNK, RECORD_SHARDS, RecordMap, shardOf } from '../../src/store/embedded/file/record-map.js';

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

  it('hands empty slots at the end out again (a put rolled back), without leaving a hole', () => {
    const records = new RecordMap<number>([['a', 1]]);
    records.set('b', 2);
    records.delete('b');
    expect(records.slots).toBe(1);
    records.set('c', 3);
    records.set('b', 5);
    expect(records.slots).toBe(3);
    expect([...records.keys()]).toEqual(['a', 'c', 'b']);
    // Two empty slots at the end: both handed out again.
    records.delete('c');
    records.delete('b');
    expect(records.slots).toBe(1);
  });

  it('agrees with a Map over many keys and random puts, updates and deletes across chunks', () => {
    const next = random(15);
    const records = new RecordMap<number>();
    const expected = new Map<string, number>();
    // Phases of mostly puts, then mostly deletes: chunks fill, thin out (compacted), empty (let go) and fill again.
    for (const [steps, puts] of [[60_000, 0.6], [60_000, 0.15], [40_000, 0.7], [80_000, 0.05]] as const) {
      for (let step = 0; step < steps; step++) {
        const key = orderNo(Math.floor(next() * 20_000));
        const roll = next();
        if (roll < puts) {
          records.set(key, step);
          expected.set(key, step);
        } else if (roll < 0.95) {
          expect(records.delete(key)).toBe(expected.delete(key));
        } else {
          expect(records.get(key)).toBe(expected.get(key));
        }
      }
      expect(records.size).toBe(expected.size);
      expect([...records.entries()]).toEqual([...expected.entries()]);
      expect(records.keySnapshot().flat().filter((key) => key !== undefined)).toEqual([...expected.keys()]);
      const entries = [...records.entryChunks()].flatMap(({ keys, values }) => keys.map((key, i) => [key, values[i]] as const));
      expect(entries.filter(([key]) => key !== undefined)).toEqual([...expected.entries()]);
      for (const [key, value] of expected) expect(records.get(key)).toBe(value);
    }
  });

  it('holds slots in proportion to its records, not to every insert ever made (a few long-lived records among churn)', () => {
    const records = new RecordMap<number>();
    const kept: string[] = [];
    // 400,000 jobs come and go, each done 1,000 inserts after it came; one in 4,000 stays (a job due far ahead): one in every chunk.
    const key = (i: number): string => `step:${orderNo(i)}`;
    for (let i = 0; i < 400_000 + 1_000; i++) {
      if (i < 400_000) records.set(key(i), i);
      const done = i - 1_000;
      if (done < 0) continue;
      if (done % 4_000 === 0) kept.push(key(done));
      else records.delete(key(done));
    }
    expect(records.size).toBe(kept.length);
    expect(records.keyList()).toEqual(kept);
    // Without compaction every chunk would stay whole: ~400,000 slots. With it: under twice the
    // records plus 64 per chunk (one is compacted no shorter than that), and the last chunk.
    const chunks = Math.ceil(400_000 / RECORD_CHUNK);
    expect(records.slots).toBeLessThan(2 * kept.length + 64 * chunks + RECORD_CHUNK);
  });

  it('also compacts a chunk whose records went while it was the last one (one long-lived record at its end)', () => {
    const records = new RecordMap<number>();
    const kept: string[] = [];
    let n = 0;
    for (let chunk = 0; chunk < 50; chunk++) {
      const gone: string[] = [];
      for (let i = 0; i < RECORD_CHUNK - 1; i++) {
        records.set(orderNo(n), n);
        gone.push(orderNo(n++));
      }
      records.set(orderNo(n), n);
      kept.push(orderNo(n++));
      for (const key of gone) records.delete(key);
    }
    records.set('next', n);
    kept.push('next');
    expect(records.keyList()).toEqual(kept);
    for (const key of kept) expect(records.get(key)).toBeDefined();
    // Without it: 50 whole chunks, 204,801 slots.
    expect(records.slots).toBeLessThan(2 * kept.length + 64 * 51 + RECORD_CHUNK);
  });

  it('lets go of the chunks whose records were all deleted (retention takes the oldest)', () => {
    const records = new RecordMap<number>();
    const total = RECORD_CHUNK * 5;
    for (let i = 0; i < total; i++) records.set(orderNo(i), i);
    expect(records.slots).toBe(total);
    for (let i = 0; i < RECORD_CHUNK * 3; i++) records.delete(orderNo(i));
    expect(records.slots).toBe(RECORD_CHUNK * 2);
    expect(records.size).toBe(RECORD_CHUNK * 2);
    expect(records.keyList()[0]).toBe(orderNo(RECORD_CHUNK * 3));
    // A chunk in the middle emptied (a reset of the client that made it): let go as well.
    records.set('later', 0);
    for (let i = RECORD_CHUNK * 4; i < total; i++) records.delete(orderNo(i));
    expect(records.slots).toBe(RECORD_CHUNK + 1);
    for (let i = RECORD_CHUNK * 3; i < RECORD_CHUNK * 4; i++) records.delete(orderNo(i));
    records.delete('later');
    expect(records.size).toBe(0);
    expect(records.keyList()).toEqual([]);
    records.set('again', 1);
    expect([...records.entries()]).toEqual([['again', 1]]);
  });

  it('snapshots its keys as they are (a checkpoint reads them while records come and go)', () => {
    const records = new RecordMap<number>([['a', 1], ['b', 2], ['c', 3]]);
    records.delete('b');
    const snapshot = records.keySnapshot();
    records.delete('a');
    records.set('b', 4);
    records.set('d', 5);
    expect(snapshot.flat()).toEqual(['a', undefined, 'c']);
    expect(records.keySnapshot().flat().filter((key) => key !== undefined)).toEqual(['c', 'b', 'd']);
  });

  it('hands out its records beside their keys a chunk at a time, each as it is when the reader gets to it', () => {
    const chunk = RECORD_CHUNK;
    const records = new RecordMap<number>();
    for (let i = 0; i < 3 * chunk; i += 1) records.set(`k${i}`, i);
    const chunks = records.entryChunks();
    const first = chunks.next().value!;
    // Meanwhile: the first chunk emptied (let go, the log's front moves), a record of the second replaced, one of the third deleted, a fourth chunk begun.
    for (let i = 0; i < chunk; i += 1) records.delete(`k${i}`);
    records.set(`k${chunk}`, -1);
    records.delete(`k${2 * chunk}`);
    records.set('new', 0);
    const rest = [...chunks];
    expect(first.keys).toHaveLength(chunk);
    expect(first.values[0]).toBe(0);
    expect(rest).toHaveLength(2);
    expect(rest[0]!.values[0]).toBe(-1);
    expect(rest[1]!.keys[0]).toBeUndefined();
    expect(rest[1]!.values[1]).toBe(2 * chunk + 1);
    expect(rest.flatMap((c) => c.keys)).not.toContain('new');
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
