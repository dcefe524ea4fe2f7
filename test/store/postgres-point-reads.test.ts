import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStorage } from '../../src/store/postgres/storage.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { orderRecord } from './contract.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

/** The connections the requests' pool has opened so far. */
const opened = (storage: PostgresStorage): number => (storage as unknown as { connections: { pool: { totalCount: number } } }).connections.pool.totalCount;

describe('PostgreSQL point reads outside a unit of work', () => {
  it('sends the reads of one turn of the event loop together on one connection, each answered with its own row', async () => {
    const storage = await PostgresStorage.open({ url: await server.freshDatabase(), requestLogSize: 10 });
    try {
      const numbers = Array.from({ length: 12 }, (_, i) => String(5_000_000_000 + i));
      await storage.transaction(async (tx) => {
        for (const [i, orderNo] of numbers.entries()) await tx.orders.insert({ ...orderRecord(orderNo, i % 2 === 0 ? 'a' : 'b', 1_000 + i), awb: `JN${orderNo}` });
      });
      const before = opened(storage);
      const read = await Promise.all([...numbers.map((n) => storage.orders.get(n)), ...numbers.map((n) => storage.orders.byAwb(`JN${n}`)), storage.orders.get('missing')]);
      expect(read.slice(0, 12).map((o) => o?.order_no)).toEqual(numbers);
      expect(read.slice(12, 24).map((o) => o?.awb)).toEqual(numbers.map((n) => `JN${n}`));
      expect(read[24]).toBeUndefined();
      // 25 reads at once: two groups (of at most 16) at most, where one connection each would open the pool's ten.
      expect(opened(storage) - before).toBeLessThanOrEqual(2);
      // The group's connections went back to the pool: the next reads and a unit of work find them.
      expect((await storage.orders.get(numbers[0]!))?.client_id).toBe('a');
      await storage.transaction(async (tx) => tx.orders.update((await tx.orders.get(numbers[1]!))!));
      expect((await storage.orders.get(numbers[1]!))?.version).toBe(2);
    } finally {
      await storage.close();
    }
  });
});
