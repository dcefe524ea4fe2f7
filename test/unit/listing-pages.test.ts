import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/store/cursor.js';
import { pageOf, type Listing } from '../../src/store/embedded/pages.js';
import { SortedKeys } from '../../src/store/embedded/sorted-keys.js';

interface Row {
  id: string;
  rank: number;
  status: 'created' | 'delivered';
  version: number;
  created_at: number;
}

/** A client's orders, oldest first: every third delivered. */
function orders(count: number): { keys: SortedKeys; rows: Map<string, Row> } {
  const keys = new SortedKeys(64);
  const rows = new Map<string, Row>();
  for (let i = 0; i < count; i++) {
    const id = `o${String(i).padStart(6, '0')}`;
    rows.set(id, { id, rank: 1_000 + i, status: i % 3 === 0 ? 'delivered' : 'created', version: 1, created_at: 1_000 + i });
    keys.add({ rank: 1_000 + i, id });
  }
  return { keys, rows };
}

/** Busy for about this many µs: a record that takes time to read, so a scan spans slices. */
function spin(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}

function listing(keys: SortedKeys, rows: Map<string, Row>, options: Partial<Listing<Row, Row>> & { readUs?: number }): Listing<Row, Row> {
  return {
    keys,
    cursor: undefined,
    limit: 5,
    filtered: true,
    sliced: true,
    load: (id) => {
      if (options.readUs) spin(options.readUs);
      return rows.get(id);
    },
    keep: (row) => row.status === 'delivered',
    positionOf: (row) => ({ rank: row.rank, id: row.id }),
    open: (row) => row,
    ...options,
  };
}

/** Counts turns of the event loop taken while `work` runs: a scan in one go takes none. */
async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const tick = (): void => {
    if (!running) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  const result = await work();
  running = false;
  return { result, turns };
}

describe('a filtered listing of the embedded store (pageOf)', () => {
  it('counts every match and takes the page after the cursor in one scan', async () => {
    const { keys, rows } = orders(30);
    const first = await pageOf(listing(keys, rows, {}));
    expect(first.total).toBe(10);
    expect(first.items.map((row) => row.id)).toEqual(['o000027', 'o000024', 'o000021', 'o000018', 'o000015']);
    const second = await pageOf(listing(keys, rows, { cursor: first.next_cursor! }));
    expect(second.total).toBe(10);
    expect(second.items.map((row) => row.id)).toEqual(['o000012', 'o000009', 'o000006', 'o000003', 'o000000']);
    expect(second.next_cursor).toBeNull();
  });

  it('lets other work run between slices of a long scan, and counts what is there as it goes', async () => {
    const { keys, rows } = orders(6_000);
    // Each read takes ~10 µs: the scan takes ~60 ms, many slices of 5 ms.
    const { result, turns } = await turnsDuring(() => pageOf(listing(keys, rows, { readUs: 10 })));
    expect(turns).toBeGreaterThan(2);
    expect(result.total).toBe(2_000);
    expect(result.items).toHaveLength(5);
  });

  it('sees keys removed and added between slices once, as they are then', async () => {
    const { keys, rows } = orders(6_000);
    let changed = false;
    const change = (): void => {
      if (changed) return;
      changed = true;
      // The oldest delivered order goes (not scanned yet); a newer one comes (behind the scan: not counted).
      rows.delete('o000000');
      keys.remove({ rank: 1_000, id: 'o000000' });
      rows.set('o999999', { id: 'o999999', rank: 999_999, status: 'delivered', version: 1, created_at: 999_999 });
      keys.add({ rank: 999_999, id: 'o999999' });
    };
    setImmediate(change);
    const page = await pageOf(listing(keys, rows, { readUs: 10 }));
    expect(changed).toBe(true);
    expect(page.total).toBe(1_999);
    expect(page.items[0]!.id).toBe('o005997');
  });

  it('scans in one go when not sliced (a unit of work reads as its writes wait)', async () => {
    const { keys, rows } = orders(3_000);
    const { result, turns } = await turnsDuring(() => pageOf(listing(keys, rows, { readUs: 10, sliced: false })));
    expect(turns).toBe(0);
    expect(result.total).toBe(1_000);
  });

  it('stops at the page when the total is not counted or the listing is not filtered', async () => {
    const { keys, rows } = orders(3_000);
    let reads = 0;
    const counted = (options: Partial<Listing<Row, Row>>) => listing(keys, rows, { ...options, load: (id) => ((reads += 1), rows.get(id)) });
    const uncounted = await pageOf(counted({ counted: false, cursor: encodeCursor({ rank: 3_999, id: 'o002999' }) }));
    expect(uncounted.total).toBe(-1);
    expect(uncounted.items.map((row) => row.id)).toEqual(['o002997', 'o002994', 'o002991', 'o002988', 'o002985']);
    expect(reads).toBe(17); // to the sixth match, which says there is more
    reads = 0;
    const all = await pageOf(counted({ filtered: false, keep: () => true }));
    expect(all.total).toBe(3_000);
    expect(reads).toBe(6);
  });
});
