import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../src/store/postgres/storage.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { orderRecord } from './contract.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

/** The most listing statements (a page with its count) this process had at the database at once, from now until `stop`; `sent` counts them all. */
function listingsAtOnce(): { stop: () => number; sent: () => number } {
  const query = pg.Client.prototype.query;
  let open = 0;
  let most = 0;
  let sent = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = args[0] as string | { text: string };
    const callback = args.at(-1);
    // pg-pool's query asks with a callback; a client's own query answers with a promise.
    if ((typeof text === 'string' ? text : text.text).includes('count(*) AS total') && typeof callback === 'function') {
      most = Math.max(most, (open += 1));
      sent += 1;
      args[args.length - 1] = (...answer: unknown[]) => {
        open -= 1;
        return (callback as (...a: unknown[]) => unknown)(...answer);
      };
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  return {
    stop: () => {
      pg.Client.prototype.query = query;
      return most;
    },
    sent: () => sent,
  };
}

describe('PostgreSQL listings', () => {
  it("runs at most two of one client's listings at once on a replica, the rest after them, each with its page and total", async () => {
    const storage = await PostgresStorage.open({ url: await server.freshDatabase(), requestLogSize: 10 });
    try {
      for (let i = 0; i < 30; i += 1) await storage.orders.insert(orderRecord(String(5_000_000_000 + i), 'a', 1_000 + i));
      // The pool's connections opened first, so that none of the listings waits for one to open.
      await Promise.all(Array.from({ length: 8 }, () => storage.orders.count('a')));
      const counted = listingsAtOnce();
      let pages: Array<{ items: unknown[]; total: number }>;
      try {
        pages = await Promise.all(Array.from({ length: 8 }, () => storage.orders.list('a', { limit: 5 })));
      } finally {
        expect(counted.stop()).toBeLessThanOrEqual(2);
      }
      expect(pages.map((page) => [page.items.length, page.total])).toEqual(Array.from({ length: 8 }, () => [5, 30]));
    } finally {
      await storage.close();
    }
  });

  it('does not start a listing that waited for its turn once its client has hung up', async () => {
    const storage = await PostgresStorage.open({ url: await server.freshDatabase(), requestLogSize: 10 });
    try {
      for (let i = 0; i < 30; i += 1) await storage.orders.insert(orderRecord(String(5_000_000_000 + i), 'a', 1_000 + i));
      await Promise.all(Array.from({ length: 8 }, () => storage.orders.count('a')));
      const scope = storage.requestScope!;
      const hungUp = new Error('the client hung up');
      // Two requests whose clients stay, then six whose clients have gone by their turn.
      const listing = (stays: boolean) =>
        scope.run(
          async () => {
            scope.client('a');
            return storage.orders.list('a', { limit: 5 });
          },
          () => {
            if (!stays) throw hungUp;
          },
        );
      const counted = listingsAtOnce();
      let results: PromiseSettledResult<{ total: number }>[];
      try {
        results = await Promise.allSettled([true, true, false, false, false, false, false, false].map(listing));
      } finally {
        counted.stop();
      }
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value.total : r.reason))).toEqual([30, 30, hungUp, hungUp, hungUp, hungUp, hungUp, hungUp]);
      expect(counted.sent()).toBe(2);
      // The lane is free again: a listing after them runs at once.
      expect((await scope.run(async () => (scope.client('a'), storage.orders.list('a', { limit: 1 })))).total).toBe(30);
    } finally {
      await storage.close();
    }
  });
});
