import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixtures } from '../../src/fixtures/load.js';
import { IdFactory } from '../../src/ids/factory.js';
import type { Order } from '../../src/records/order.js';
import { ORDER_COLUMNS, orderColumns } from '../../src/store/postgres/orders.js';
import { seedOrders, type SeededOrders } from '../../scripts/seed-postgres.js';
import { deliveredOrder } from '../support/delivered-order.js';
import { createRequest } from '../support/orders.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { TOKEN_A, testSandbox } from '../support/sandbox.js';

const COUNT = 2_000;

let server: TestPostgres;
let url: string;
let seeded: SeededOrders;
let template: Order;
beforeAll(async () => {
  server = await startPostgres();
  url = await server.freshDatabase();
  // The template belongs to client-a, the first client of testSandbox.
  template = { ...(await deliveredOrder(TOKEN_A)), client_id: 'client-a' };
  seeded = await seedOrders({ url, template, count: COUNT, batchSize: 700 });
}, 60_000);
afterAll(() => server?.stop());

describe('seedOrders (PostgreSQL)', () => {
  it('writes rows as the adapter writes them: the columns are those of the data column', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT ${ORDER_COLUMNS.join(', ')}, version, data FROM orders ORDER BY created_at`);
      expect(rows).toHaveLength(COUNT);
      for (const row of [rows[0], rows[999], rows[COUNT - 1]]) {
        expect(ORDER_COLUMNS.map((c) => (c === 'created_at' ? Number(row[c]) : row[c]))).toEqual(orderColumns(row.data));
        expect(row.version).toBe(1);
        const { order_no, batch_id, awb, created_at, item, ...rest } = row.data as Order;
        const { version: _version, order_no: _o, batch_id: _b, awb: _a, created_at: _c, item: templateItem, ...templateRest } = template as Order & { version?: number };
        expect(rest).toEqual(templateRest);
        expect({ ...item, order_code: templateItem.order_code }).toEqual(templateItem);
        expect([order_no, batch_id, awb, created_at < template.created_at]).toEqual([expect.stringMatching(/^5\d{11}$/), expect.stringMatching(/^7\d{11}$/), expect.stringMatching(/^JN\d{10}$/), true]);
      }
      expect(rows[0].order_no).toBe(seeded.first.order_no);
      expect(rows[COUNT - 1].awb).toBe(seeded.last.awb);
      // The counters stand at the numbers taken, so the sandbox's next ones are new; the copies need no jobs.
      const counters = await client.query<{ name: string; value: string }>('SELECT name, value FROM counters ORDER BY name');
      expect(counters.rows.map((r) => [r.name, Number(r.value)])).toEqual([['awb:jne', COUNT], ['batch', COUNT], ['order', COUNT]]);
      expect((await client.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n).toBe(0);
      expect((await client.query(`SELECT value FROM meta WHERE key = 'jobs_migrated'`)).rows).toHaveLength(1);
    } finally {
      await client.end();
    }
  });

  it('leaves a consistent sandbox: seeded orders listed, detailed and tracked; a new order numbered after them, never colliding', async () => {
    // No --seed: the sandbox numbers with the seed kept in the database, as the seeder did.
    const sandbox = await testSandbox({ databaseUrl: url, seed: undefined });
    try {
      const listed = await sandbox.call('GET', '/__sandbox/orders?limit=3');
      expect(listed.status).toBe(200);
      expect(listed.body.total).toBe(COUNT);
      expect(listed.body.orders[0]).toMatchObject({ order_no: seeded.last.order_no, awb: seeded.last.awb, status: 'delivered' });

      const detail = await sandbox.call('GET', `/__sandbox/orders/${seeded.first.order_no}`);
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({ order_no: seeded.first.order_no, awb: seeded.first.awb, status: 'delivered' });

      const tracking = await sandbox.call('GET', `/v1/order/tracking/${seeded.first.awb}`);
      expect(tracking.status).toBe(200);
      expect(tracking.body.last_status).toBe('2');
      expect(tracking.body.history).toHaveLength(template.history.length);

      // The numbers the seeder took, and the next ones of each counter.
      const ids = new IdFactory(seeded.seed);
      const courier = loadFixtures().couriers.get(template.courier_code)!;
      const seededOrderNumbers = new Set(Array.from({ length: COUNT }, (_, i) => ids.orderNumberOf(i + 1, 'client-a')));
      expect(seededOrderNumbers.has(seeded.first.order_no) && seededOrderNumbers.has(seeded.last.order_no)).toBe(true);
      const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
      expect(created.status).toBe(201);
      const [orderNo] = created.body.order_numbers as string[];
      expect(orderNo).toBe(ids.orderNumberOf(COUNT + 1, 'client-a'));
      expect(seededOrderNumbers.has(orderNo!)).toBe(false);

      await sandbox.advance(60_000);
      const made = await sandbox.call('GET', `/__sandbox/orders/${orderNo}`);
      expect(made.body).toMatchObject({ status: 'awb_generated', awb: ids.awbOf(courier, COUNT + 1, 'client-a'), batch_id: ids.batchIdOf(COUNT + 1, 'client-a') });
      expect((await sandbox.call('GET', '/__sandbox/orders?limit=1')).body.total).toBe(COUNT + 1);
    } finally {
      await sandbox.close();
    }
  });
});
