import { describe, expect, it } from 'vitest';
import type { Position } from '../../src/store/cursor.js';
import { SortedKeys } from '../../src/store/embedded/sorted-keys.js';

const at = 1_795_030_536_758; // a creation time: too big for a small integer

/** Every id newest first after `from`, as a listing's scan visits them. */
function newestFirst(keys: SortedKeys, from?: Position): string[] {
  const ids: string[] = [];
  keys.scanNewestFirst(from, (id) => (ids.push(id), true));
  return ids;
}

describe('a listing index (SortedKeys)', () => {
  it('lists ids newest first by rank, then id, whatever order they were added in', () => {
    const keys = new SortedKeys();
    for (const [rank, id] of [[at + 2, 'c'], [at, 'a'], [at + 1, 'b2'], [at + 1, 'b1'], [at + 3, 'd']] as const) keys.add({ rank, id });
    expect(newestFirst(keys)).toEqual(['d', 'c', 'b2', 'b1', 'a']);
    expect([...keys.oldestFirst()]).toEqual(['a', 'b1', 'b2', 'c', 'd']);
    expect(keys.size).toBe(5);
  });

  it('pages from a cursor, exclusive, also when the cursor names an entry since removed', () => {
    const keys = new SortedKeys();
    for (let i = 0; i < 6; i++) keys.add({ rank: at + i, id: `o${i}` });
    expect(newestFirst(keys, { rank: at + 3, id: 'o3' })).toEqual(['o2', 'o1', 'o0']);
    keys.remove({ rank: at + 3, id: 'o3' });
    expect(newestFirst(keys, { rank: at + 3, id: 'o3' })).toEqual(['o2', 'o1', 'o0']);
    expect(newestFirst(keys)).toEqual(['o5', 'o4', 'o2', 'o1', 'o0']);
  });

  it('removes only the entry at that exact position', () => {
    const keys = new SortedKeys();
    keys.add({ rank: at, id: 'a' });
    keys.add({ rank: at, id: 'b' });
    keys.remove({ rank: at + 1, id: 'a' }); // same id, another rank: not this entry
    keys.remove({ rank: at, id: 'c' });
    expect([...keys.oldestFirst()]).toEqual(['a', 'b']);
    keys.remove({ rank: at, id: 'a' });
    expect([...keys.oldestFirst()]).toEqual(['b']);
    expect(keys.size).toBe(1);
  });

  it('keeps listing order across chunks as entries come and go in any order (checked against a sort, chunks of 4)', () => {
    const keys = new SortedKeys(4);
    const kept = new Map<string, number>();
    const listed = () => [...kept].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([id]) => id);
    let seed = 7;
    const random = (n: number) => (seed = (seed * 48_271) % 2_147_483_647) % n;
    for (let step = 0; step < 2_000; step++) {
      const id = `o${random(300)}`;
      if (kept.has(id)) {
        keys.remove({ rank: kept.get(id)!, id });
        kept.delete(id);
      } else {
        const rank = at + random(50);
        keys.add({ rank, id });
        kept.set(id, rank);
      }
      if (step % 97 === 0) {
        const ids = listed();
        expect([...keys.oldestFirst()]).toEqual(ids);
        expect(keys.size).toBe(ids.length);
        // Paging from every entry as a cursor gives what follows it, newest first.
        const newest = [...ids].reverse();
        newest.forEach((cursorId, i) => expect(newestFirst(keys, { rank: kept.get(cursorId)!, id: cursorId })).toEqual(newest.slice(i + 1)));
        // A cursor naming no entry (one removed since): what comes after its place.
        const cursor = { rank: at + random(50), id: `o${random(300)}x` };
        const afterCursor = newest.filter((id) => kept.get(id)! < cursor.rank || (kept.get(id) === cursor.rank && id < cursor.id));
        expect(newestFirst(keys, cursor)).toEqual(afterCursor);
      }
    }
    for (const [id, rank] of kept) keys.remove({ rank, id });
    expect(keys.size).toBe(0);
    expect(newestFirst(keys)).toEqual([]);
    keys.add({ rank: at, id: 'again' });
    expect(newestFirst(keys, { rank: at + 1, id: 'x' })).toEqual(['again']);
  });
});
