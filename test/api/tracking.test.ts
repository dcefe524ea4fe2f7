import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox();
});
afterEach(() => sandbox.close());

async function createOne(headers: Record<string, string> = {}): Promise<string> {
  const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers });
  return res.body.order_numbers[0];
}

describe('GET /v1/order/tracking/{order_no}', () => {
  it('returns 404 Record Not Found for an unknown AWB', async () => {
    const res = await sandbox.call('GET', '/v1/order/tracking/JN0000000000');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, message: 'Record Not Found', errors: [] });
  });

  it.each([['a%20b'], ['a.b'], ['%2E%2E'], ['x'.repeat(65)]])('returns 400 naming order_no for %s', async (awb) => {
    const res = await sandbox.call('GET', `/v1/order/tracking/${awb}`);
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('order_no');
  });

  it('returns 401 without a token, even for a magic AWB', async () => {
    const res = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001', { token: null });
    expect(res.status).toBe(401);
  });

  it("answers 404 to another client for an order's AWB, as if it did not exist", async () => {
    const orderNo = await createOne();
    await sandbox.advance(60_000);
    const { awb } = (await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body;
    await sandbox.advance(3 * 3_600_000);
    expect((await sandbox.call('GET', `/v1/order/tracking/${awb}`)).status).toBe(200);
    expect((await sandbox.call('GET', `/v1/order/tracking/${awb}`, { token: TOKEN_B })).status).toBe(404);
    expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`, { token: TOKEN_B })).status).toBe(404);
  });
});

describe('tenant isolation of orders', () => {
  it('lists only the calling client’s orders', async () => {
    await createOne();
    await sandbox.call('POST', '/v1/order', { body: createRequest(2), token: TOKEN_B });
    const a = await sandbox.call('GET', '/__sandbox/orders');
    const b = await sandbox.call('GET', '/__sandbox/orders', { token: TOKEN_B });
    expect(a.body.total).toBe(1);
    expect(b.body.total).toBe(2);
  });

  it('resets only the calling client’s orders', async () => {
    await createOne();
    await sandbox.call('POST', '/v1/order', { body: createRequest(2), token: TOKEN_B });
    const reset = await sandbox.call('POST', '/__sandbox/reset', { token: TOKEN_B });
    expect(reset.body.removed.orders).toBe(2);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(1);
    expect((await sandbox.call('GET', '/__sandbox/orders', { token: TOKEN_B })).body.total).toBe(0);
  });

  it('does not let another client generate an AWB or advance an order', async () => {
    const orderNo = await createOne();
    expect((await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`, { token: TOKEN_B })).status).toBe(404);
    expect((await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`, { token: TOKEN_B })).status).toBe(404);
    expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.awb).toBeNull();
  });
});
