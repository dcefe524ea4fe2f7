import { afterEach, describe, expect, it, vi } from 'vitest';
import { Unavailable } from '../../src/shared/errors.js';
import { PgCounters, RANK_LEAD_MS } from '../../src/store/postgres/counters.js';
import type { Db } from '../../src/store/postgres/db.js';

/** A database that answers the ranks' read as PostgreSQL does: the row moved on (two seconds ahead of its clock) and its clock. */
function answering(reads: string[], name: string, clock: () => number = Date.now): Db {
  let row = 0;
  return {
    scheduled: () => undefined,
    query: async <R>(_text: string, values?: unknown[]) => {
      reads.push(name);
      const now = clock();
      row = Math.max(row, Number(values![1]) + 1, Math.round((now + RANK_LEAD_MS) * 1_024));
      return { rows: [{ value: String(row), now_ms: now }] as R[], rowCount: 1 };
    },
  };
}

const failing = (error: Error): Db => ({
  scheduled: () => undefined,
  query: () => Promise.reject(error),
});

// A rank waits for a read when the row is not past it (at the start, or when the replica's own reads fell behind).
describe('a delivery rank on PostgreSQL', () => {
  it("reads as part of the unit that asked for it when the replica's own read failed, and fails as the unit's statements do", async () => {
    const reads: string[] = [];
    const unit = answering(reads, 'unit');
    const counters = new PgCounters(
      () => unit,
      () => failing(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
    );
    const first = await counters.rank('delivery');
    expect(reads).toEqual(['unit']);
    // Below the row it moved on: no read.
    expect(await counters.rank('delivery')).toBeGreaterThan(first);
    expect(reads).toEqual(['unit']);
    // The database away for the unit too: the unit's own error (a 503 in a request), not the replica's read's.
    const away = new PgCounters(
      () => failing(new Unavailable('The sandbox cannot save changes right now.')),
      () => failing(new Error('connect ECONNREFUSED 127.0.0.1:5432')),
    );
    await expect(away.rank('delivery')).rejects.toBeInstanceOf(Unavailable);
  });

  it("waits for the replica's own read when one is under way, and then reads no more", async () => {
    const reads: string[] = [];
    const own = answering(reads, 'own');
    const counters = new PgCounters(() => answering(reads, 'unit'), () => own);
    counters.start();
    const ranks = await Promise.all(Array.from({ length: 50 }, () => counters.rank('delivery')));
    expect(new Set(ranks).size).toBe(50);
    expect(reads.filter((r) => r === 'unit')).toEqual([]);
    await counters.close();
  });

  describe('a replica that gives no ranks', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('reads the clock (and writes the row) only after a second that gave ranks, and writes nothing when it stops', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
      const reads: string[] = [];
      const own = answering(reads, 'own');
      const counters = new PgCounters(() => answering(reads, 'unit'), () => own);
      counters.start();
      await counters.syncRanks();
      await vi.waitFor(() => expect(reads).toEqual(['own', 'own']), { timeout: 10_000 });
      // Idle: the seconds pass without a read.
      await vi.advanceTimersByTimeAsync(10_000);
      expect(reads).toEqual(['own', 'own']);
      // A rank below the row, then the next second's read.
      await counters.rank('delivery');
      expect(reads).toEqual(['own', 'own']);
      await vi.advanceTimersByTimeAsync(1_000);
      await vi.waitFor(() => expect(reads).toEqual(['own', 'own', 'own']), { timeout: 10_000 });
      // Idle again, then stopped: no statement.
      await vi.advanceTimersByTimeAsync(5_000);
      await counters.close();
      expect(reads).toEqual(['own', 'own', 'own']);
    });

    it('gives its first rank after a pause past the lead once its own read moved the row on, above every rank before', async () => {
      // Both clocks, the database's and the replica's monotonic one, jump ahead together: a pause.
      let pause = 0;
      const monotonic = performance.now.bind(performance);
      const reads: string[] = [];
      const own = answering(reads, 'own', () => Date.now() + pause);
      const counters = new PgCounters(() => answering(reads, 'unit', () => Date.now() + pause), () => own);
      const now = vi.spyOn(performance, 'now').mockImplementation(() => monotonic() + pause);
      try {
        const before = await counters.rank('delivery');
        expect(reads).toEqual(['own']);
        pause = RANK_LEAD_MS + 1_000;
        const after = await counters.rank('delivery');
        // The pause's three seconds (less what reading the clock's offset may be out by), not the rank after the last.
        expect(after - before).toBeGreaterThan((pause - 100) * 1_024);
        expect(reads).toEqual(['own', 'own']);
      } finally {
        now.mockRestore();
        await counters.close();
      }
    });
  });
});
