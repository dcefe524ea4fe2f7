import { describe, expect, it } from 'vitest';
import { SortedKeys } from '../../src/store/embedded/sorted-keys.js';

const at = 1_795_030_536_758; // a creation time: too big for a small integer

describe('a listing index (SortedKeys)', () => {
  it('lists ids newest first by rank, then id, whatever order they were added in', () => {
    const keys = new SortedKeys();
    for (const [rank, id] of [[at + 2, 'c'], [at, 'a'], [at + 1, 'b2'], [at + 1, 'b1'], [at + 3, 'd']] as const) keys.add({ rank, id });
    expect([...keys.newestFirst()]).toEqual(['d', 'c', 'b2', 'b1', 'a']);
    expect([...keys.oldestFirst()]).toEqual(['a', 'b1', 'b2', 'c', 'd']);
    expect(keys.size).toBe(5);
  });

  it('pages from a cursor, exclusive, also when the cursor names an entry since removed', () => {
    const keys = new SortedKeys();
    for (let i = 0; i < 6; i++) keys.add({ rank: at + i, id: `o${i}` });
    expect([...keys.newestFirst({ rank: at + 3, id: 'o3' })]).toEqual(['o2', 'o1', 'o0']);
    keys.remove({ rank: at + 3, id: 'o3' });
    expect([...keys.newestFirst({ rank: at + 3, id: 'o3' })]).toEqual(['o2', 'o1', 'o0']);
    expect([...keys.newestFirst()]).toEqual(['o5', 'o4', 'o2', 'o1', 'o0']);
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
});
