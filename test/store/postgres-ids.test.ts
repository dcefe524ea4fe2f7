import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdFactory } from '../../src/ids/factory.js';
import { PostgresStorage } from '../../src/store/postgres/storage.js';
import { createRequest } from '../support/orders.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { TOKEN_B, testSandbox } from '../support/sandbox.js';
import { orderRecord } from './contract.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

/** The numbers the sandbox of test/support/sandbox.ts (seed 'test-seed') draws first. */
const ids = new IdFactory('test-seed');

/** Writes client-b's order straight into the database, as a sandbox under another seed of it may have. */
async function existingOrder(url: string, orderNo: string, batchId: string, awb: string | null = null): Promise<void> {
  const storage = await PostgresStorage.open({ url, requestLogSize: 10 });
  // With an AWB it has had it generated: no AWB of its own is due (a created order would draw one at the start).
  await storage.orders.insert({ ...orderRecord(orderNo, 'client-b', 1_000), batch_id: batchId, awb, ...(awb === null ? {} : { status: 'awb_generated' as const }) });
  await storage.close();
}

// On PostgreSQL a create draws its numbers without looking them up: the insert refuses a
// taken one, and the create is tried again with fresh numbers.
describe('POST /v1/order on PostgreSQL, when a number it draws is taken already', () => {
  it('gets a fresh order number when the drawn one exists already, and leaves the existing order alone', async () => {
    const url = await server.freshDatabase();
    const taken = ids.orderNumberOf(1, 'client-a');
    await existingOrder(url, taken, '700000000001');
    const sandbox = await testSandbox({ databaseUrl: url });
    try {
      const created = await sandbox.call('POST', '/v1/order', { body: createRequest(2) });
      expect(created.status).toBe(201);
      const numbers = created.body.order_numbers as string[];
      expect(numbers).toHaveLength(2);
      expect(numbers).not.toContain(taken);
      for (const orderNo of numbers) expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body).toMatchObject({ batch_id: created.body.batch_id, status: 'created' });
      expect((await sandbox.call('GET', `/__sandbox/orders/${taken}`, { token: TOKEN_B })).body).toMatchObject({ order_no: taken, batch_id: '700000000001' });
    } finally {
      await sandbox.close();
    }
  });

  it('gets a fresh batch id when the drawn one is another order’s, and keeps that order its batch alone', async () => {
    const url = await server.freshDatabase();
    const taken = ids.batchIdOf(1, 'client-a');
    await existingOrder(url, '500000000001', taken);
    const sandbox = await testSandbox({ databaseUrl: url });
    try {
      const created = await sandbox.call('POST', '/v1/order', { body: createRequest(3) });
      expect(created.status).toBe(201);
      expect(created.body.batch_id).toMatch(/^7\d{11}$/);
      expect(created.body.batch_id).not.toBe(taken);
      const listed = await sandbox.call('GET', `/__sandbox/orders?limit=10`, { token: TOKEN_B });
      expect(listed.body.orders.map((o: { order_no: string; batch_id: string }) => [o.order_no, o.batch_id])).toEqual([['500000000001', taken]]);
      for (const orderNo of created.body.order_numbers as string[]) expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.batch_id).toBe(created.body.batch_id);
    } finally {
      await sandbox.close();
    }
  });

  it('gets a fresh AWB when the drawn one is another order’s, and leaves that order its AWB', async () => {
    const url = await server.freshDatabase();
    const taken = ids.awbOf({ code: 'jne', awb_prefix: 'JN', awb_digits: 10 }, 1, 'client-a');
    await existingOrder(url, '500000000001', '700000000001', taken);
    const sandbox = await testSandbox({ databaseUrl: url });
    try {
      const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
      expect(created.status).toBe(201);
      const orderNo = (created.body.order_numbers as string[])[0]!;
      const generated = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
      expect(generated.status).toBe(200);
      expect(generated.body.awb).toMatch(/^JN\d{10}$/);
      expect(generated.body.awb).not.toBe(taken);
      expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body).toMatchObject({ status: 'awb_generated', awb: generated.body.awb });
      expect((await sandbox.call('GET', `/__sandbox/orders/500000000001`, { token: TOKEN_B })).body.awb).toBe(taken);
    } finally {
      await sandbox.close();
    }
  });
});
