import { describe, expect, it } from 'vitest';
import { DueHeap, type DueEntry } from '../../src/store/embedded/due-heap.js';

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
});
