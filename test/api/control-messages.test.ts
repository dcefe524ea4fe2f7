import { afterEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

// What a control call's bad input is told: in words a user acts on, not the schema
// validator's (`must NOT have fewer than 1 properties`, `must match format "int32"`).
let sandbox: TestSandbox;
afterEach(() => sandbox?.close());

describe('the words of a refused control call', () => {
  it('says an endpoint change with no field must set one', async () => {
    sandbox = await testSandbox();
    const created = await sandbox.call('POST', '/__sandbox/webhooks/endpoints', { body: { url: 'http://127.0.0.1:9/hooks' } });
    expect(created.status).toBe(201);
    const res = await sandbox.call('PATCH', `/__sandbox/webhooks/endpoints/${created.body.id}`, { body: {} });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'body', message: 'must set at least one field' }]);
  });

  it('gives the range of a step index past a whole number of 32 bits', async () => {
    sandbox = await testSandbox();
    const { order_numbers } = (await sandbox.call('POST', '/v1/order', { body: createRequest(1) })).body;
    const res = await sandbox.call('POST', `/__sandbox/orders/${order_numbers[0]}/advance`, { body: { step: 99_999_999_999 } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'step', message: 'must be a whole number from -2147483648 to 2147483647' }]);
  });

  it.each(['yesterday', '2026-01-01', '2026-01-01T00:00:00'])('says what a time must be: %j is not a date and a time with its offset', async (since) => {
    sandbox = await testSandbox();
    const res = await sandbox.call('POST', '/__sandbox/webhooks/recover', { body: { since } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'since', message: 'must be a date and a time with its offset, as RFC 3339 writes one: 2026-01-01T00:00:00Z' }]);
  });

  it('says "at most 1 entry" where a create may hold one item', async () => {
    sandbox = await testSandbox({ maxItems: 1 });
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(2) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ field: 'items', message: 'must hold at most 1 entry' });
  });
});
