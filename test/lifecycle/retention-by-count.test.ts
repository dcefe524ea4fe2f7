import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Conflict } from '../../src/shared/index.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';

let sandbox: TestSandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

async function createBatch(s: TestSandbox, items: number, token?: string): Promise<string[]> {
  const res = await s.call('POST', '/v1/order', { body: createRequest(items), ...(token ? { token } : {}) });
  expect(res.status).toBe(201);
  return res.body.order_numbers as string[];
}

const total = async (s: TestSandbox, token?: string): Promise<number> => (await s.call('GET', '/__sandbox/orders', token ? { token } : {})).body.total as number;
const statusOf = async (s: TestSandbox, orderNo: string) => (await s.call('GET', `/__sandbox/orders/${orderNo}`)).status;

describe('--retention-orders', () => {
  const dir = tempDir();

  it("keeps a client's newest orders up to the limit: its oldest go with their tracking, another client's stay", async () => {
    sandbox = await testSandbox({ retentionOrders: 20 });
    const other = await createBatch(sandbox, 5, TOKEN_B);
    const oldest = await createBatch(sandbox, 10);
    await sandbox.call('POST', `/__sandbox/orders/${oldest[0]}/awb`);
    const { awb } = (await sandbox.call('GET', `/__sandbox/orders/${oldest[0]}`)).body;
    await sandbox.advance(1_000);
    const middle = await createBatch(sandbox, 10);
    await sandbox.advance(1_000);
    const newest = await createBatch(sandbox, 10);

    await vi.waitFor(async () => expect(await total(sandbox!)).toBe(20), { timeout: 10_000 });
    for (const orderNo of oldest) expect(await statusOf(sandbox, orderNo)).toBe(404);
    expect((await sandbox.call('GET', `/v1/order/tracking/${awb}`)).status).toBe(404);
    for (const orderNo of [...middle, ...newest]) expect(await statusOf(sandbox, orderNo)).toBe(200);
    expect(await total(sandbox, TOKEN_B)).toBe(5);
    expect(await sandbox.services.metrics.registry.getSingleMetricAsString('sandbox_orders_removed_total')).toContain('sandbox_orders_removed_total{reason="count"} 10');
    for (const orderNo of other) expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`, { token: TOKEN_B })).status).toBe(200);
  });

  it('removes the journal entries older than the oldest order kept, and the removed orders\' AWB jobs', async () => {
    sandbox = await testSandbox({ retentionOrders: 10 });
    await createBatch(sandbox, 10);
    const creates = async () => (await sandbox!.call('GET', '/__sandbox/requests')).body.requests.filter((e: { operation_id: string }) => e.operation_id === 'createOrder');
    // Read once, so the entry is written (on PostgreSQL journal entries go in batches) before the removal looks for it.
    expect(await creates()).toHaveLength(1);
    await sandbox.advance(1_000);
    const kept = await createBatch(sandbox, 10);

    await vi.waitFor(async () => expect(await creates()).toHaveLength(1), { timeout: 10_000 });
    expect(await total(sandbox)).toBe(10);
    // The removed orders' AWB jobs went with them: only the kept orders' are due.
    expect(await sandbox.services.storage.jobs.count('client-a')).toBe(10);
    await sandbox.advance(120_000);
    const orders = (await sandbox.call('GET', '/__sandbox/orders?limit=100')).body.orders as Array<{ order_no: string; awb: string | null }>;
    expect(orders.map((o) => o.order_no).sort()).toEqual([...kept].sort());
    expect(orders.every((o) => o.awb !== null)).toBe(true);
  });

  it('counts and lists again when another replica removed some of the same orders at once (a Conflict), and stops at the limit', async () => {
    sandbox = await testSandbox({ retentionOrders: 10 });
    const removeListed = vi.spyOn(sandbox.services.orders, 'removeListed').mockRejectedValueOnce(new Conflict('changed by another replica'));
    await createBatch(sandbox, 10);
    await sandbox.advance(1_000);
    const kept = await createBatch(sandbox, 10);
    await vi.waitFor(async () => expect(await total(sandbox!)).toBe(10), { timeout: 10_000 });
    expect(removeListed.mock.calls.length).toBeGreaterThanOrEqual(2);
    for (const orderNo of kept) expect(await statusOf(sandbox, orderNo)).toBe(200);
  });

  it("removes the removed orders' webhook deliveries, sent or not, with their jobs", async () => {
    sandbox = await testSandbox({ retentionOrders: 10 });
    const old = await createBatch(sandbox, 10);
    await sandbox.advance(2 * 60_000); // the AWBs, each with its webhook delivery (held: no URL)
    const deliveriesOf = async (orderNo: string) => (await sandbox!.call('GET', `/__sandbox/webhooks/deliveries?order_no=${orderNo}`)).body.total as number;
    expect(await deliveriesOf(old[0]!)).toBe(1);
    await createBatch(sandbox, 10);
    // The orders go first, then their deliveries.
    await vi.waitFor(async () => expect(await deliveriesOf(old.at(-1)!)).toBe(0), { timeout: 10_000 });
    expect(await total(sandbox)).toBe(10);
    for (const orderNo of old) expect(await deliveriesOf(orderNo)).toBe(0);
  });

  it('never removes an order made at the client\'s latest time: on a clock that did not move, none goes until it moves on', async () => {
    sandbox = await testSandbox({ retentionOrders: 10 });
    await createBatch(sandbox, 10);
    const sameTime = await createBatch(sandbox, 10);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await total(sandbox)).toBe(20);
    for (const orderNo of sameTime) expect(await statusOf(sandbox, orderNo)).toBe(200);
    await sandbox.advance(1_000);
    const [latest] = await createBatch(sandbox, 1);
    await vi.waitFor(async () => expect(await total(sandbox!)).toBe(10), { timeout: 10_000 });
    expect(await statusOf(sandbox, latest!)).toBe(200);
  });

  it('brings a client over the limit at start down to it, and keeps it there', async () => {
    const data = join(dir(), 'sandbox.json');
    sandbox = await testSandbox({ data });
    const first = await createBatch(sandbox, 10);
    await sandbox.advance(1_000);
    const second = await createBatch(sandbox, 10);
    await sandbox.close();

    sandbox = await testSandbox({ data, retentionOrders: 15 });
    await vi.waitFor(async () => expect(await total(sandbox!)).toBe(15), { timeout: 10_000 });
    for (const orderNo of second) expect(await statusOf(sandbox, orderNo)).toBe(200);
    expect((await Promise.all(first.map((orderNo) => statusOf(sandbox!, orderNo)))).filter((status) => status === 200)).toHaveLength(5);
    // One more order, one fewer of the oldest: the new one stays.
    await sandbox.advance(1_000);
    const [latest] = await createBatch(sandbox, 1);
    await vi.waitFor(async () => expect((await Promise.all(first.map((orderNo) => statusOf(sandbox!, orderNo)))).filter((status) => status === 200)).toHaveLength(4), { timeout: 10_000 });
    expect(await total(sandbox)).toBe(15);
    expect(await statusOf(sandbox, latest!)).toBe(200);
  });
});
