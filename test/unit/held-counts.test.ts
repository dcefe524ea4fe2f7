import { describe, expect, it } from 'vitest';
import { HELD_COUNT_MS, HeldCounts } from '../../src/webhooks/held-counts.js';

/** A store's count of held deliveries, and how often it was asked. */
function storeCount(start: number) {
  const store = { held: start, asked: 0 };
  return { store, count: async () => ((store.asked += 1), store.held) };
}

describe('HeldCounts (the outbox bound without a count per event)', () => {
  it('asks the store once, then adds its own held deliveries while there is room', async () => {
    let now = 0;
    const counts = new HeldCounts(() => now);
    const { store, count } = storeCount(3);
    expect(await counts.of('c', count)).toBe(3);
    for (let i = 0; i < 5; i += 1) {
      counts.added('c');
      store.held += 1;
      now += 10;
      expect(await counts.of('c', count)).toBe(store.held);
    }
    expect(store.asked).toBe(1);
  });

  it('asks the store again once a count is stale, at the bound too (room another replica made is seen within a second)', async () => {
    let now = 0;
    const counts = new HeldCounts(() => now);
    const { store, count } = storeCount(4);
    expect(await counts.of('c', count)).toBe(4);
    store.held = 1; // another replica made room (a reset)
    now += HELD_COUNT_MS - 1;
    expect(await counts.of('c', count)).toBe(4);
    expect(store.asked).toBe(1);
    now += 1;
    expect(await counts.of('c', count)).toBe(1);
    store.held = 3; // another replica held two more: not seen while the count stands
    expect(await counts.of('c', count)).toBe(1);
    now += HELD_COUNT_MS;
    expect(await counts.of('c', count)).toBe(3);
    expect(store.asked).toBe(3);
  });

  it('counts afresh after this process lowered the count (a resume, a reset), and keeps clients apart', async () => {
    const counts = new HeldCounts(() => 0);
    const a = storeCount(7);
    const b = storeCount(2);
    expect(await counts.of('a', a.count)).toBe(7);
    expect(await counts.of('b', b.count)).toBe(2);
    a.store.held = 0;
    counts.forget('a');
    expect(await counts.of('a', a.count)).toBe(0);
    expect(await counts.of('b', b.count)).toBe(2);
    expect([a.store.asked, b.store.asked]).toEqual([2, 1]);
  });
});
