import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IntervalBatches } from '../../src/store/postgres/interval-batch.js';

describe('IntervalBatches (the PostgreSQL journal and report writes)', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('holds items for the interval, then writes all of them in one call, in the order they were added', async () => {
    const calls: number[][] = [];
    const batches = new IntervalBatches<number>(async (items) => void calls.push(items), { intervalMs: 100, most: 50 });
    const written = [1, 2, 3].map((n) => batches.add(n));
    await vi.advanceTimersByTimeAsync(99);
    expect(calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await Promise.all(written);
    expect(calls).toEqual([[1, 2, 3]]);
  });

  it('writes at once when asked (a read through the replica), and when `most` items wait', async () => {
    const calls: number[][] = [];
    const batches = new IntervalBatches<number>(async (items) => void calls.push(items), { intervalMs: 100, most: 3 });
    const first = batches.add(1);
    await batches.flush();
    await first;
    expect(calls).toEqual([[1]]);
    const full = [2, 3, 4].map((n) => batches.add(n));
    await Promise.all(full);
    expect(calls).toEqual([[1], [2, 3, 4]]);
  });

  it('writes one batch at a time: items added meanwhile go in the next', async () => {
    const calls: number[][] = [];
    let release: () => void = () => undefined;
    const batches = new IntervalBatches<number>(
      (items) => {
        calls.push(items);
        return calls.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
      },
      { intervalMs: 100, most: 10 },
    );
    const a = batches.add(1);
    const flushing = batches.flush();
    const b = batches.add(2);
    const second = batches.flush();
    expect(calls).toEqual([[1]]);
    release();
    await Promise.all([a, b, flushing, second]);
    expect(calls).toEqual([[1], [2]]);
  });

  it('fails only the items the write says it could not keep, or all when the write throws', async () => {
    const batches = new IntervalBatches<number>(async (items) => items.map((n) => (n % 2 === 0 ? new Error(`no ${n}`) : undefined)), { intervalMs: 100, most: 10 });
    const outcomes = Promise.allSettled([1, 2, 3].map((n) => batches.add(n)));
    await batches.flush();
    expect((await outcomes).map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const failing = new IntervalBatches<number>(() => Promise.reject(new Error('database away')), { intervalMs: 100, most: 10 });
    const both = Promise.allSettled([1, 2].map((n) => failing.add(n)));
    await failing.drained();
    expect((await both).map((o) => o.status)).toEqual(['rejected', 'rejected']);
  });
});
