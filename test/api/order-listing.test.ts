import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

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
