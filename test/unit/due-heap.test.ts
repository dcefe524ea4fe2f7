import { describe, expect, it } from 'vitest';
import { DUE_HEAP_CHUNK, DueHeap, type DueEntry } from '../../src/store/embedded/due-heap.js';

const at = 1_795_030_536_758;

describe('the due-job queue of the embedded store (DueHeap)', () => {
  it('gives entries back earliest first, and in queueing order at one due time', () => {
    const heap = new DueHeap();
    const entries: DueEntry[] = [];
    // A fixed shuffle of 500 entries: 50 due times, 10 entries at each.
    for (let i = 0; i < 500; i++) entries.push({ at: at + ((i * 37) % 50) * 1_000, id: `job-${i}`, order: i + 1 });
    for (const entry of entries) heap.push(entry);
    expect(heap.size).toBe(500);
    expect(new Set(heap.jobIds())).toEqual(new Set(entries.map((e) => e.id)));
    const popped: DueEntry[] = [];
    for (let id = heap.topId(); id !== undefined; id = heap.topId()) {
      popped.push({ at: heap.topAt(), id, order: heap.topOrder() });
      heap.pop();
    }
    const sorted = [...entries].sort((a, b) => a.at - b.at || a.order - b.order);
    expect(popped).toEqual(sorted);
    expect(heap.size).toBe(0);
    heap.pop(); // popping an empty heap does nothing
    expect([heap.topId(), heap.topAt(), heap.topOrder()]).toEqual([undefined, Number.NaN, Number.NaN]);
  });

  it('keeps its order while entries come and go', () => {
    const heap = new DueHeap();
    heap.push({ at: at + 5, id: 'late', order: 1 });
    heap.push({ at: at + 1, id: 'early', order: 2 });
    expect(heap.topId()).toBe('early');
    heap.pop();
    heap.push({ at: at + 5, id: 'late-too', order: 3 });
    heap.push({ at: at + 2, id: 'soon', order: 4 });
    const ids: string[] = [];
    for (let id = heap.topId(); id !== undefined; id = heap.topId()) {
      ids.push(id);
      heap.pop();
    }
    expect(ids).toEqual(['soon', 'late', 'late-too']);
  });

  it('gives entries back in order across several chunks of its arrays, while they come and go', () => {
    const heap = new DueHeap();
    const waiting: DueEntry[] = [];
    let seed = 15;
    const next = (): number => (seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
    let order = 0;
    const taken: string[] = [];
    const expected: string[] = [];
    const takeOne = (): void => {
      waiting.sort((a, b) => a.at - b.at || a.order - b.order);
      expected.push(waiting.shift()!.id);
      taken.push(heap.topId()!);
      heap.pop();
    };
    // Grows past three chunks, shrinks back under one, grows again: chunks are added and let go.
    for (const [pushes, left] of [[DUE_HEAP_CHUNK * 4, 10], [DUE_HEAP_CHUNK + 5, 3]]) {
      for (let i = 0; i < pushes!; i++) {
        const entry = { at: at + Math.floor(next() * 1_000) * 1_000, id: `job-${order}`, order: (order += 1) };
        heap.push(entry);
        waiting.push(entry);
        if (i % 7 === 0) takeOne();
      }
      while (waiting.length > left!) takeOne();
    }
    expect(taken).toEqual(expected);
    expect(heap.size).toBe(waiting.length);
    expect(new Set(heap.jobIds())).toEqual(new Set(waiting.map((e) => e.id)));
  });
  it('keeps only the entries it is told to keep, then gives them back earliest first (retain)', () => {
    const heap = new DueHeap();
    const entries: DueEntry[] = [];
    // More than two chunks, in a fixed shuffle of due times with ties.
    for (let i = 0; i < 2 * DUE_HEAP_CHUNK + 100; i++) entries.push({ at: at + ((i * 7919) % 997), id: `job-${i}`, order: i + 1 });
    for (const entry of entries) heap.push(entry);
    heap.retain((id) => Number(id.slice(4)) % 3 === 0);
    const kept = entries.filter((e) => Number(e.id.slice(4)) % 3 === 0).sort((a, b) => a.at - b.at || a.order - b.order);
    expect(heap.size).toBe(kept.length);
    heap.push({ at: at - 1, id: 'first', order: 1e9 });
    const popped: string[] = [];
    for (let id = heap.topId(); id !== undefined; id = heap.topId()) {
      popped.push(id);
      heap.pop();
    }
    expect(popped).toEqual(['first', ...kept.map((e) => e.id)]);
    heap.retain(() => true); // an empty heap stays empty
    expect(heap.size).toBe(0);
  });
  it('keeps one entry per job id when told to: the one queued first', () => {
    const heap = new DueHeap();
    for (let copy = 0; copy < 3; copy++) for (let i = 0; i < DUE_HEAP_CHUNK + 10; i++) heap.push({ at: at + (i % 50), id: `job-${i}`, order: copy * 100_000 + i });
    heap.retain(() => true);
    expect(heap.size).toBe(3 * (DUE_HEAP_CHUNK + 10));
    heap.retain(() => true, true);
    expect(heap.size).toBe(DUE_HEAP_CHUNK + 10);
    const popped: number[] = [];
    for (let id = heap.topId(); id !== undefined; id = heap.topId()) {
      popped.push(heap.topOrder());
      heap.pop();
    }
    expect(popped.every((order) => order < 100_000)).toBe(true);
  });
});
