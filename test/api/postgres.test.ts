import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../../src/app/sandbox.js';
import { createRequest } from '../support/orders.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';
import { deliveries, webhookSandbox } from '../webhooks/support.js';

let server: TestPostgres;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

describe('the sandbox on PostgreSQL (--database-url)', () => {
  it('creates, lists, tracks and cancels orders, generates AWBs, sends the signed webhook and keeps it all across a restart', async () => {
    const url = await server.freshDatabase();
    const receiver = await Receiver.start();
    let sandbox = await webhookSandbox(receiver.url, { databaseUrl: url });
    try {
      const created = await sandbox.call('POST', '/v1/order', { body: createRequest(2) });
      expect(created.status).toBe(201);
      const [first, second] = created.body.order_numbers as string[];
      expect((await sandbox.call('GET', `/__sandbox/orders/${first}`)).body).toMatchObject({ status: 'created', awb: null });

      await sandbox.advance(60_000);
      const detail = (await sandbox.call('GET', `/__sandbox/orders/${first}`)).body;
      expect(detail).toMatchObject({ status: 'awb_generated', awb: expect.stringMatching(/^JN\d{10}$/) });
      const sent = await deliveries(sandbox);
      expect(sent.map((d) => [d.event, d.status])).toEqual([
        ['awb.generated', 'delivered'],
        ['awb.generated', 'delivered'],
      ]);
      expect(receiver.received).toHaveLength(2);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(2);

      const listing = await sandbox.call('GET', '/__sandbox/orders?limit=1');
      expect(listing.body.orders).toHaveLength(1);
      expect(listing.body.next_cursor).toEqual(expect.any(String));
      expect((await sandbox.call('GET', '/__sandbox/orders?limit=10', { token: TOKEN_B })).body.orders).toEqual([]);
      // Another partner finds none of them, by number or by AWB, and cannot cancel one.
      expect((await sandbox.call('GET', `/v1/order/tracking/${detail.awb}`, { token: TOKEN_B })).status).toBe(404);
      expect((await sandbox.call('GET', `/__sandbox/orders/${first}`, { token: TOKEN_B })).status).toBe(404);
      expect((await sandbox.call('POST', '/v1/order/cancel', { body: { order_no: second }, token: TOKEN_B })).status).toBe(404);

      const cancelled = await sandbox.call('POST', '/v1/order/cancel', { body: { order_no: second } });
      expect(cancelled.status).toBe(200);

      await sandbox.advance(3 * 24 * 3600_000);
      const tracking = await sandbox.call('GET', `/v1/order/tracking/${detail.awb}`);
      expect(tracking.status).toBe(200);
      expect(tracking.body.history.length).toBeGreaterThan(1);

      await sandbox.close();
      sandbox = await webhookSandbox(receiver.url, { databaseUrl: url });
      expect((await sandbox.call('GET', `/__sandbox/orders/${second}`)).body.status).toBe('cancelled');
      // The same history (pod_photo URLs name the address they were fetched from, which changed).
      const entries = (history: Array<{ note: string; update_on: number; status: string | null }>) => history.map((h) => [h.note, h.update_on, h.status]);
      expect(entries((await sandbox.call('GET', `/v1/order/tracking/${detail.awb}`, { token: TOKEN_A })).body.history)).toEqual(entries(tracking.body.history));
      expect(await deliveries(sandbox, '&event=awb.generated')).toHaveLength(2);
    } finally {
      await sandbox.close();
      await receiver.close();
    }
  });

  it("finishes a reset whose client hung up at once (the listings of its removals are not a read to cut short), and a create's retention", async () => {
    const sandbox = await createSandbox({ port: 0, databaseUrl: await server.freshDatabase(), tokens: ['hang-up'], clock: 'manual', logLevel: 'silent' });
    const call = (method: string, path: string, body?: unknown, signal?: AbortSignal) =>
      fetch(`${sandbox.url}${path}`, { method, headers: { authorization: 'Bearer hang-up', 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(signal ? { signal } : {}) });
    const total = async () => ((await (await call('GET', '/__sandbox/orders?limit=1')).json()) as { total: number }).total;
    try {
      for (let i = 0; i < 12; i += 1) expect((await call('POST', '/v1/order', createRequest(100))).status).toBe(201);
      // More than two pages of removals (500 each): the client gives up as soon as they begin (not
      // before its turn: a request whose client left while it waited is not carried out at all).
      const gaveUp = new AbortController();
      const { orders } = sandbox.services;
      const removeAll = orders.removeAll.bind(orders);
      orders.removeAll = (client) => {
        gaveUp.abort();
        return removeAll(client);
      };
      await call('POST', '/__sandbox/reset', undefined, gaveUp.signal).catch(() => undefined);
      expect(gaveUp.signal.aborted).toBe(true);
      for (const end = Date.now() + 20_000; (await total()) > 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
      expect(await total()).toBe(0);
    } finally {
      await sandbox.close();
    }
  }, 60_000);

  it('numbers orders, batches and AWBs exactly as the embedded store does under one --seed (one replica)', async () => {
    /** Three batches of four orders (couriers of the spec's example), a minute of clock, and what came of it. */
    const journey = async (sandbox: TestSandbox) => {
      const batches: unknown[] = [];
      for (let i = 0; i < 3; i += 1) batches.push((await sandbox.call('POST', '/v1/order', { body: createRequest(4) })).body);
      await sandbox.advance(60_000);
      const orders = (await sandbox.call('GET', '/__sandbox/orders?limit=100')).body.orders as { order_no: string; awb: string | null; batch_id: string }[];
      await sandbox.close();
      return { batches, orders: orders.map((o) => [o.order_no, o.batch_id, o.awb]) };
    };
    const onPostgres = await journey(await testSandbox({ seed: 'same-seed', databaseUrl: await server.freshDatabase() }));
    const embedded = await journey(await testSandbox({ seed: 'same-seed' }));
    expect(onPostgres.orders).toHaveLength(12);
    expect(onPostgres.orders.every(([, , awb]) => typeof awb === 'string')).toBe(true);
    expect(onPostgres).toEqual(embedded);
  });
});
