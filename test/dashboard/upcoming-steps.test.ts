import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

const HOUR = 3_600_000;

describe('GET /__sandbox/orders/{order_no}: upcoming steps (the dashboard timeline)', () => {
  let sandbox: TestSandbox;
  let orderNo: string;
  beforeEach(async () => {
    sandbox = await testSandbox();
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers: { 'X-Sandbox-Scenario': 'delivered' } });
    orderNo = created.body.order_numbers[0];
  });
  afterEach(() => sandbox.close());

  it('lists every step of the scenario, counted from the AWB due time, while the AWB is pending', async () => {
    const { body } = await sandbox.call('GET', `/__sandbox/orders/${orderNo}`);
    const scenario = (await sandbox.call('GET', '/__sandbox/scenarios')).body.find((s: { name: string }) => s.name === 'delivered');
    expect(body.upcoming.map((s: { key: string }) => s.key)).toEqual(scenario.steps.map((s: { key: string }) => s.key));
    expect(body.upcoming[0]).toEqual({ key: 'pickup', note: 'Pick up scan', status: '1', due_at: new Date(Date.parse(body.awb_due_at) + 2 * HOUR).toISOString() });
  });

  it('drops a step once it is played and keeps the next one equal to `next`', async () => {
    await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
    const { body } = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`);
    expect(body.history).toHaveLength(1);
    expect(body.upcoming[0]).toMatchObject({ key: body.next.step, due_at: body.next.due_at });
    expect(body.upcoming.map((s: { key: string }) => s.key)).not.toContain('pickup');
  });

  it('is empty once the order is delivered', async () => {
    await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
    const { body } = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`, { body: { step: 'pod' } });
    expect(body.status).toBe('delivered');
    expect(body.upcoming).toEqual([]);
  });
});
