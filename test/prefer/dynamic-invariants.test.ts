import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

// `Prefer: dynamic=true` answers are generated from the schema; they must still be answers the
// provider could send. Each case asks with its own seed, so the cases are many different answers.
let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await testSandbox();
});
afterAll(() => sandbox.close());

const SEEDS = Array.from({ length: 60 }, (_, i) => `case-${i}`);

interface Entry {
  note: string;
  update_on: number;
  status: string | null;
  pod_photo: string | null;
}

describe('GET /v1/order/tracking/{order_no} with Prefer: dynamic=true', () => {
  it.each(SEEDS)('answers a history the provider could send (seed %s)', async (seed) => {
    // sandbox.call checks the answer against the served schema (positive epochs, status codes, pod_photo a URI).
    const res = await sandbox.call('GET', '/v1/order/tracking/SBXDLV00000001', { headers: { Prefer: `dynamic=true, seed=${seed}` } });
    expect(res.status).toBe(200);
    const history = res.body.history as Entry[];
    expect(history.length).toBeGreaterThan(0);
    const times = history.map((e) => e.update_on);
    expect(times, 'newest first').toEqual([...times].sort((a, b) => b - a));
    expect(res.body.last_update).toBe(history[0]!.update_on);
    expect(times.every((t) => Number.isInteger(t) && t > 0)).toBe(true);
    expect(res.body.last_status).toBe(history.find((e) => e.status !== null)?.status);
    for (const entry of history) expect(entry.pod_photo === null || /^https?:\/\//.test(entry.pod_photo)).toBe(true);
  });
});

describe('POST /v1/order with Prefer: dynamic=true', () => {
  it.each(SEEDS.slice(0, 30).map((seed, i) => [seed, 1 + (i % 4)] as const))('answers one order number per item (seed %s, %i items)', async (seed, count) => {
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(count), headers: { Prefer: `dynamic=true, seed=${seed}` } });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(res.body.order_numbers).toHaveLength(count);
    expect(new Set(res.body.order_numbers).size).toBe(count);
    for (const n of res.body.order_numbers as string[]) expect(n).toMatch(/^[0-9]+$/);
    expect(res.body.batch_id).toMatch(/^[0-9]+$/);
  });
});

describe('POST /v1/order with Prefer: code=503, dynamic=true', () => {
  it.each(SEEDS.slice(0, 20))('answers a Retry-After a client can wait: whole seconds from 1 to an hour (seed %s)', async (seed) => {
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers: { Prefer: `code=503, dynamic=true, seed=${seed}` } });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(3600);
  });
});

describe('GET /v1/order/{order_no} with Prefer: dynamic=true', () => {
  it.each(SEEDS.slice(0, 30))('answers times that are positive epoch seconds (seed %s)', async (seed) => {
    const res = await sandbox.call('GET', '/v1/order/123', { headers: { Prefer: `code=200, dynamic=true, seed=${seed}` } });
    expect(res.status).toBe(200);
    const { created_at, updated_at, awb_generated_at, cancelled_at } = res.body.data as Record<string, number | null>;
    for (const time of [created_at, updated_at, awb_generated_at, cancelled_at]) expect(time === null || (Number.isInteger(time) && time! > 0)).toBe(true);
  });
});

/** An order detail whose fields go together, as the sandbox's own details do. */
function expectCoherentDetail(data: Record<string, unknown>, orderNo: string): void {
  expect(data.order_no).toBe(orderNo);
  expect(data.order_code).toBe((data.item as { order_code: string }).order_code);
  const status = data.status as string;
  expect(data.cancelled_at === null, `cancelled_at ${String(data.cancelled_at)} with status ${status}`).toBe(status !== 'cancelled');
  const hasAwb = data.awb !== null;
  expect(data.awb_generated_at === null).toBe(!hasAwb);
  if (['created', 'awb_failed'].includes(status)) expect(hasAwb).toBe(false);
  if (['awb_generated', 'picked_up', 'in_transit', 'delivery_failed', 'delivered', 'returned'].includes(status)) expect(hasAwb).toBe(true);
  expect(data.awb_error === null).toBe(status !== 'awb_failed');
  expect(data.last_status === null).toBe(!hasAwb || status === 'awb_generated');
  if (status === 'cancelled' && hasAwb) expect(data.last_status).toBe('5');
  const created = data.created_at as number;
  for (const time of [data.awb_generated_at, data.cancelled_at]) if (time !== null) expect(time as number).toBeGreaterThanOrEqual(created);
  expect(data.updated_at as number).toBe(Math.max(...[created, data.awb_generated_at, data.cancelled_at, data.updated_at].filter((t): t is number => typeof t === 'number')));
}

describe('GET /v1/order/{order_no} with Prefer: code=200, dynamic=true', () => {
  it.each(SEEDS.slice(0, 30))('answers the order asked for, its fields together (seed %s)', async (seed) => {
    const res = await sandbox.call('GET', '/v1/order/508734411209', { headers: { Prefer: `code=200, dynamic=true, seed=${seed}` } });
    expect(res.status).toBe(200);
    expectCoherentDetail(res.body.data, '508734411209');
  });
});

describe('POST /v1/order/cancel with Prefer: code=200, dynamic=true', () => {
  it.each(SEEDS.slice(0, 30))('answers the order asked for, cancelled, with the message that says so (seed %s)', async (seed) => {
    const res = await sandbox.call('POST', '/v1/order/cancel', { body: { order_no: '508734411209' }, headers: { Prefer: `code=200, dynamic=true, seed=${seed}` } });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Order 508734411209 has been cancelled.');
    expect(res.body.data.status).toBe('cancelled');
    expectCoherentDetail(res.body.data, '508734411209');
  });
});
