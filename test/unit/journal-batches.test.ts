import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/records/index.js';
import { Unavailable } from '../../src/shared/index.js';
import type { Db } from '../../src/store/postgres/db.js';
import { PgRequestLog } from '../../src/store/postgres/requests.js';

const outage = () => new Unavailable('The sandbox cannot save changes right now (the database: 57P01); nothing was saved. Retry shortly.');
const entry = (n: number): JournalEntry => ({ id: n, at: '2026-12-06T12:00:00.000Z', method: 'GET', path: `/orders/SO-${n}`, operation_id: 'getOrder', status: 200 }) as unknown as JournalEntry;

/** A database whose journal inserts fail as `fails` says, in turn (undefined: that one is written); it counts them and the entries each carried. */
function database(fails: Array<(() => Error) | undefined>): { db: Db; inserts: number[] } {
  const inserts: number[] = [];
  const db: Db = {
    query: async <R>(text: string, values?: unknown[]) => {
      if (text.includes('INSERT INTO request_log')) {
        inserts.push((JSON.parse(values![0] as string) as unknown[]).length);
        const failure = fails.shift();
        if (failure) throw failure();
      }
      return { rows: [] as R[], rowCount: 0 };
    },
    scheduled: () => undefined,
  };
  return { db, inserts };
}

describe('the request journal on PostgreSQL', () => {
  it('keeps a batch whose connection dropped: it is tried once more, whole, after a pause', async () => {
    const { db, inserts } = database([outage]);
    const journal = new PgRequestLog(() => db, 100, 5, 20);
    const appends = [1, 2, 3].map((n) => journal.append('client-a', entry(n)));
    await expect(Promise.all(appends)).resolves.toEqual([undefined, undefined, undefined]);
    expect(inserts).toEqual([3, 3]);
  });

  it('loses a batch the database still cannot take at its second try, each append failing with the outage, not entry by entry', async () => {
    const { db, inserts } = database([outage, outage]);
    const journal = new PgRequestLog(() => db, 100, 5, 20);
    const appends = [1, 2, 3].map((n) => journal.append('client-a', entry(n)));
    const settled = await Promise.allSettled(appends);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect((settled[0] as PromiseRejectedResult).reason).toBeInstanceOf(Unavailable);
    expect(inserts).toEqual([3, 3]);
  });

  it('writes entry by entry a batch the database refused for another reason, so one bad entry loses only itself', async () => {
    const refused = () => Object.assign(new Error('invalid input syntax'), { code: '22P02' });
    // The statement of three entries is refused; then entries 1 and 2 are written and 3 is refused.
    const { db, inserts } = database([refused, undefined, undefined, refused]);
    const journal = new PgRequestLog(() => db, 100, 5, 20);
    const settled = await Promise.allSettled([1, 2, 3].map((n) => journal.append('client-a', entry(n))));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(inserts).toEqual([3, 1, 1, 1]);
  });
});
