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
    const counts = new HeldCounts(10, () => now);
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

  it('lets a count that the store gave at the bound stand for a second, and asks again once it is stale', async () => {
    let now = 0;
    const counts = new HeldCounts(4, () => now);
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

  it('asks the store when only its own additions reach the bound (a unit that added one may have rolled back)', async () => {
    const counts = new HeldCounts(4, () => 0);
    const { store, count } = storeCount(3);
    expect(await counts.of('c', count)).toBe(3);
    counts.added('c'); // its unit rolled back: the store still has 3
    expect(await counts.of('c', count)).toBe(3);
    expect(store.asked).toBe(2);
  });

  it('counts afresh for a second after this process lowered the count, keeping no count begun before (a resume, a reset), and keeps clients apart', async () => {
    let now = 0;
    const counts = new HeldCounts(10, () => now);
    const a = storeCount(0);
    const b = storeCount(2);
    expect(await counts.of('b', b.count)).toBe(2);
    // A count that began before the reset and ends after it is not kept.
    let release!: () => void;
    const slow = counts.of('a', async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return 7;
    });
    counts.forget('a');
    release();
    expect(await slow).toBe(7);
    expect(await counts.of('a', a.count)).toBe(0);
    expect(await counts.of('a', a.count)).toBe(0);
    expect(a.store.asked).toBe(2);
    // The other client's count still stands.
    expect(await counts.of('b', b.count)).toBe(2);
    expect(b.store.asked).toBe(1);
    // A second later counts stand again.
    now += HELD_COUNT_MS;
    expect(await counts.of('a', a.count)).toBe(0);
    expect(await counts.of('a', a.count)).toBe(0);
    expect(a.store.asked).toBe(3);
  });
});
