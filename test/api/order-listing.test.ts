import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

describe('GET /__sandbox/orders', () => {
  it('writes a page of more than 64 KiB in parts (10.8 MB in one piece held every partner 420 ms), the same JSON as page by page', async () => {
    for (let i = 0; i < 3; i++) expect((await sandbox.call('POST', '/v1/order', { body: createRequest(40) })).status).toBe(201);
    const whole = await sandbox.call('GET', '/__sandbox/orders?limit=200');
    expect(whole.headers['transfer-encoding']).toBe('chunked');
    expect(whole.headers['content-type']).toMatch(/^application\/json/);
    expect(whole.body).toMatchObject({ total: 120, next_cursor: null });
    expect(whole.body.orders).toHaveLength(120);
    const first = await sandbox.call('GET', '/__sandbox/orders?limit=1');
    expect(first.headers['content-length']).toBeDefined();
    expect(first.body.orders).toEqual([whole.body.orders[0]]);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const second = await sandbox.call('GET', `/__sandbox/orders?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.body.orders).toEqual([whole.body.orders[1]]);
  });

  it.each(['limit=1&limit=2', 'limit[]=1'])('answers ?%s with 400 saying limit must be given once', async (query) => {
    const res = await sandbox.call('GET', `/__sandbox/orders?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'limit', message: 'must be given once, as plain text' }]);
  });
});

describe("the control API's 404", () => {
  it('names the order or the delivery it did not find, another client\'s as one that does not exist', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    const mine = created.body.order_numbers[0] as string;
    for (const [method, path] of [['POST', '/__sandbox/orders/999999999999/awb'], ['POST', '/__sandbox/orders/999999999999/advance'], ['GET', '/__sandbox/orders/999999999999']] as const) {
      const res = await sandbox.call(method, path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, message: 'Order 999999999999 not found.', errors: [] });
    }
    expect((await sandbox.call('GET', `/__sandbox/orders/${mine}`, { token: TOKEN_B })).body.message).toBe(`Order ${mine} not found.`);
    const delivery = await sandbox.call('GET', '/__sandbox/webhooks/deliveries/msg_nope');
    expect(delivery.status).toBe(404);
    expect(delivery.body.message).toBe('No webhook delivery msg_nope for this client; GET /__sandbox/webhooks/deliveries lists them.');
    expect((await sandbox.call('POST', '/__sandbox/webhooks/deliveries/msg_nope/redeliver')).body.message).toMatch(/^No webhook delivery msg_nope/);
  });
});
