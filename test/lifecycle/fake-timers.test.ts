import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await sandbox?.close();
  sandbox = undefined;
});

// In-process users drive the sandbox from test suites that may fake the timers: the sandbox's own turns on the event loop must not stall then.
describe('a sandbox in a test suite that fakes the timers', () => {
  it('serves requests and plays a year of a manual clock over many orders', async () => {
    sandbox = await testSandbox();
    vi.useFakeTimers();
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(100) });
    expect(created.status).toBe(201);
    // The advance runs every due job of 100 orders' journeys; with the timers faked, it still ends.
    await sandbox.advance(365 * 86_400_000);
    const orders = await sandbox.call('GET', '/__sandbox/orders?limit=100');
    expect(orders.body.orders).toHaveLength(100);
    expect(orders.body.orders.every((order: { awb: string | null }) => typeof order.awb === 'string')).toBe(true);
  });
});
