import { describe, expect, it } from 'vitest';
import { FairTurns } from '../../src/http/turns.js';
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

  it("takes its client's turn again between slices: another client waits for a slice at most, not for every scan of the first", async () => {
    const { keys, rows } = orders(4_000);
    /** Slices of A's scans that ran while B waited for its turn, for each of B's requests. */
    async function slicesWhileBWaits(between: ((turns: FairTurns) => () => Promise<void>) | undefined): Promise<number[]> {
      const turns = new FairTurns();
      let slicesOfA = 0;
      // Ten listings of A, each past its first slice (run as it was called, as in its request's first turn).
      const scans = Array.from({ length: 10 }, async () => {
        const next = between?.(turns);
        return pageOf(listing(keys, rows, { readUs: 20, between: async () => { slicesOfA += 1; await (next ?? (() => new Promise<void>((go) => setImmediate(go))))(); } }));
      });
      // B comes once every scan of A is under way (each has ended a slice or more).
      while (slicesOfA < 10) await new Promise((resolve) => setTimeout(resolve, 5));
      const waits: number[] = [];
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        const before = slicesOfA;
        await turns.turn('B');
        waits.push(slicesOfA - before);
      }
      await Promise.all(scans);
      return waits;
    }
    const inTurns = await slicesWhileBWaits((turns) => () => turns.turn('A', { capped: false }));
    expect(Math.max(...inTurns)).toBeLessThanOrEqual(1);
    // Without the turn, the next slice of every scan under way goes before B's turn.
    const outsideTurns = await slicesWhileBWaits(undefined);
    expect(Math.max(...outsideTurns)).toBeGreaterThanOrEqual(5);
  });

  it('gives the page as it is once the scan ends: a record changed past the filter or removed between slices is left out', async () => {
    const { keys, rows } = orders(6_000);
    setImmediate(() => {
      // The newest delivered order, taken into the page in the first slice, is no longer delivered; the next is removed.
      rows.set('o005997', { ...rows.get('o005997')!, status: 'created', version: 2 });
      rows.delete('o005994');
      keys.remove({ rank: 1_000 + 5_994, id: 'o005994' });
    });
    const page = await pageOf(listing(keys, rows, { readUs: 10 }));
    expect(page.items.map((row) => row.id)).toEqual(['o005991', 'o005988', 'o005985']);
    expect(page.total).toBe(1_998);
    expect(page.next_cursor).not.toBeNull();
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
