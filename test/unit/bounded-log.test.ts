import { describe, expect, it } from 'vitest';
import { BoundedLog } from '../../src/store/embedded/bounded-log.js';

describe('BoundedLog', () => {
  it('keeps the newest `size` items in order, however many were added', () => {
    const log = new BoundedLog<number>(3);
    for (let n = 1; n <= 1000; n++) {
      log.add(n);
      expect(log.length).toBe(Math.min(n, 3));
    }
    expect(log.toArray()).toEqual([998, 999, 1000]);
  });

  it('places an item that belongs earlier after the last one it does not belong before', () => {
    const log = new BoundedLog<number>(4);
    for (const n of [1, 2, 4, 5, 3]) log.add(n, (kept) => kept > n);
    expect(log.toArray()).toEqual([2, 3, 4, 5]);
    log.add(0, (kept) => kept > 0);
    expect(log.toArray()).toEqual([2, 3, 4, 5]);
  });

  it('filters and retains without losing the order', () => {
    const log = new BoundedLog<number>(5);
    for (let n = 1; n <= 12; n++) log.add(n);
    expect(log.filter((n) => n % 2 === 0)).toEqual([8, 10, 12]);
    expect(log.retain((n) => n > 9)).toBe(2);
    expect(log.toArray()).toEqual([10, 11, 12]);
    log.add(13);
    expect(log.toArray()).toEqual([10, 11, 12, 13]);
  });

  it('keeps nothing with a size of 0', () => {
    const log = new BoundedLog<string>(0);
    log.add('a');
    expect(log.toArray()).toEqual([]);
  });
});
