import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';

let sandbox: TestSandbox;
beforeEach(async () => (sandbox = await testSandbox()));
afterEach(() => sandbox.close());

const change = (body: unknown, token?: string) => sandbox.call('POST', '/__sandbox/provider-states', { body, ...(token ? { token } : {}) });
const orderCount = async (token?: string) => (await sandbox.call('GET', '/__sandbox/orders', token ? { token } : {})).body.total as number;

describe('GET /__sandbox/provider-states', () => {
  it('lists the named states, with one per step of every scenario', async () => {
    const res = await sandbox.call('GET', '/__sandbox/provider-states');
    expect(res.status).toBe(200);
    const names = res.body.states.map((s: { state: string }) => s.state);
    expect(names).toEqual(expect.arrayContaining(['an order is created', 'an order has its AWB', 'an order is in transit', 'an order is delivered', 'an order is cancelled', 'AWB generation failed', 'an order of scenario returned is at step attempt_failed_1']));
    const scenarios = (await sandbox.call('GET', '/__sandbox/scenarios')).body as { steps: unknown[] }[];
    expect(names.filter((n: string) => n.startsWith('an order of scenario'))).toHaveLength(scenarios.reduce((n, s) => n + s.steps.length, 0));
  });
});

describe('POST /__sandbox/provider-states', () => {
  it.each([
    ['an order is created', 'created', false],
    ['an order has its AWB', 'awb_generated', true],
    ['an order is in transit', 'in_transit', true],
    ['an order is delivered', 'delivered', true],
    ['an order is cancelled', 'cancelled', true],
    ['AWB generation failed', 'awb_failed', false],
    ['an order of scenario returned is at step returned_pod', 'returned', true],
  ])('sets up "%s": a fresh order with status %s, its values at the top level', async (state, status, hasAwb) => {
    const res = await change({ state, params: {}, action: 'setup' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ order_no: expect.stringMatching(/^\d+$/), batch_id: expect.any(String), order_code: 'pact-provider-state', status, state });
    expect(res.body.awb === null).toBe(!hasAwb);
    const order = await sandbox.call('GET', `/__sandbox/orders/${res.body.order_no}`);
    expect(order.body).toMatchObject({ status, awb: res.body.awb });
    if (hasAwb && status !== 'cancelled' && status !== 'awb_generated') {
      expect((await sandbox.call('GET', `/v1/order/tracking/${res.body.awb}`)).status).toBe(200);
    }
  });

  it('holds the AWB of "an order is created" however far the clock goes, until the AWB is asked for', async () => {
    const res = await change({ state: 'an order is created', action: 'setup' });
    await sandbox.advance(24 * 3_600_000);
    expect((await sandbox.call('GET', `/__sandbox/orders/${res.body.order_no}`)).body).toMatchObject({ status: 'created', awb: null, next: null, upcoming: [] });
    const asked = await sandbox.call('POST', `/__sandbox/orders/${res.body.order_no}/awb`);
    expect(asked.body).toMatchObject({ status: 'awb_generated', awb: expect.any(String), next: { kind: 'step' } });
  });

  it('takes any JSON as params, as Pact sends them (nested objects and lists included), and ignores them', async () => {
    const res = await change({ state: 'an order is in transit', params: { order: { items: [1, 2] }, tags: ['a'], n: 1, ok: true, none: null }, action: 'setup' });
    expect(res.status).toBe(200);
    expect(res.body.order_no).toMatch(/^\d+$/);
  });

  it('makes a fresh order at each setup of the same state', async () => {
    const first = await change({ state: 'an order is in transit', action: 'setup' });
    const second = await change({ state: 'an order is in transit', action: 'setup' });
    expect(second.body.order_no).not.toBe(first.body.order_no);
    expect(second.body.awb).not.toBe(first.body.awb);
  });

  it('answers 2xx and sets up nothing for an empty state name (Pact sends one for interactions without a state)', async () => {
    const res = await change({ state: '', params: {}, action: 'setup' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({});
    expect(await orderCount()).toBe(0);
  });

  it('tears down what setups made, and only that', async () => {
    await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    await change({ state: 'an order is delivered', action: 'setup' });
    await change({ state: 'an order is created', action: 'setup' });
    expect(await orderCount()).toBe(3);
    const res = await change({ state: 'an order is delivered', action: 'teardown' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ removed: 2 });
    expect(await orderCount()).toBe(1);
  });

  it('tears down more than one page of setups (600), with their webhook deliveries, and leaves the client\'s own order and its delivery', async () => {
    await sandbox.call('PUT', '/__sandbox/webhook', { body: { url: 'http://127.0.0.1:9/hooks' } });
    const [own] = (await sandbox.call('POST', '/v1/order', { body: createRequest(1) })).body.order_numbers;
    await sandbox.advance(60_000);
    for (let i = 0; i < 600; i += 1) await change({ state: 'an order has its AWB', action: 'setup' });
    expect(await orderCount()).toBe(601);
    const deliveries = async () => (await sandbox.call('GET', '/__sandbox/webhooks/deliveries?limit=1')).body.total;
    expect(await deliveries()).toBe(601);
    const res = await change({ state: 'an order has its AWB', action: 'teardown' });
    expect(res.body).toEqual({ removed: 600 });
    expect(await orderCount()).toBe(1);
    expect(await deliveries()).toBe(1);
    expect((await sandbox.call('GET', '/__sandbox/webhooks/deliveries')).body.deliveries.map((d: { order_no: string }) => d.order_no)).toEqual([own]);
  }, 60_000);

  it('gives back the room its held deliveries took under --outbox-size at once: the next webhook is held, not failed as Outbox full', async () => {
    await sandbox.close();
    sandbox = await testSandbox({ outboxSize: 5 });
    // No webhook URL: each setup's AWB webhook is held, the sixth past the bound.
    for (let i = 0; i < 6; i += 1) await change({ state: 'an order has its AWB', action: 'setup' });
    const statuses = async () => (await sandbox.call('GET', '/__sandbox/webhooks/deliveries')).body.deliveries.map((d: { status: string }) => d.status);
    expect((await statuses()).sort()).toEqual(['failed', 'paused', 'paused', 'paused', 'paused', 'paused']);
    expect((await change({ state: '', action: 'teardown' })).body).toEqual({ removed: 6 });
    await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    await sandbox.advance(60_000);
    expect(await statuses()).toEqual(['paused']);
  });

  it('counts each order once between teardowns sent at once: together they remove what the setups made', async () => {
    for (let i = 0; i < 20; i += 1) await change({ state: 'an order is created', action: 'setup' });
    const answers = await Promise.all(Array.from({ length: 4 }, () => change({ state: 'an order is created', action: 'teardown' })));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    expect(answers.reduce((n, res) => n + (res.body.removed as number), 0)).toBe(20);
    expect(await orderCount()).toBe(0);
  });

  it('works on the caller\'s data only', async () => {
    await change({ state: 'an order is delivered', action: 'setup' }, TOKEN_B);
    expect(await orderCount()).toBe(0);
    expect(await orderCount(TOKEN_B)).toBe(1);
    await change({ state: 'an order is delivered', action: 'teardown' });
    expect(await orderCount(TOKEN_B)).toBe(1);
  });

  it.each([
    [{ state: 'an order on the moon', action: 'setup' }, 'state', /an order is in transit/],
    [{ state: 'an order is delivered' }, 'action', /required/],
    [{ state: 'an order is delivered', action: 'prepare' }, 'action', /setup/],
  ])('answers 400 naming the field for %j, and creates nothing', async (body, field, message) => {
    const res = await change(body);
    expect(res.status).toBe(400);
    const error = res.body.errors.find((e: { field: string }) => e.field === field);
    expect(error?.message).toMatch(message);
    expect(await orderCount()).toBe(0);
  });

  it('puts the verification in a readiness run of its own, so the client\'s run is not graded by it', async () => {
    await sandbox.call('POST', '/__sandbox/runs', { body: { name: 'ci-123' } });
    await change({ state: 'an order is delivered', action: 'setup' });
    await sandbox.call('GET', '/v1/order/tracking/NOSUCHAWB');
    expect((await sandbox.call('GET', '/__sandbox/report')).body.run).toMatchObject({ name: 'pact' });
    await change({ state: 'an order is in transit', action: 'setup' });
    expect((await sandbox.call('GET', '/__sandbox/report')).body.run).toMatchObject({ name: 'pact' });
    await sandbox.call('POST', '/__sandbox/runs', { body: { name: 'ci-124' } });
    expect((await sandbox.call('GET', '/__sandbox/report')).body.run).toMatchObject({ name: 'ci-124' });
  });

  it('keeps the run name "pact" to the provider states: a client\'s run of that name is a 400 naming name, and its run stays', async () => {
    await sandbox.call('POST', '/__sandbox/runs', { body: { name: 'ci-125' } });
    const refused = await sandbox.call('POST', '/__sandbox/runs', { body: { name: 'pact' } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ field: 'name', message: expect.stringMatching(/^"pact" is the run a Pact verification's provider states start/) }]);
    expect((await sandbox.call('GET', '/__sandbox/report')).body.run).toMatchObject({ name: 'ci-125' });
  });
});

describe('provider states set up by an admin for a client', () => {
  it("leave the client's readiness run as it was: an admin's requests are not graded", async () => {
    await sandbox.close();
    sandbox = await testSandbox({ adminTokens: ['states-admin-token'] });
    await sandbox.call('POST', '/__sandbox/runs', { body: { name: 'b-ci' } });
    const res = await sandbox.call('POST', '/__sandbox/provider-states', { token: 'states-admin-token', headers: { 'x-sandbox-client': 'client-a' }, body: { state: 'an order is picked up', action: 'setup' } });
    expect(res.status).toBe(200);
    expect((await sandbox.call('GET', `/__sandbox/orders/${res.body.order_no}`)).status).toBe(200);
    expect((await sandbox.call('GET', '/__sandbox/report')).body.run).toMatchObject({ name: 'b-ci' });
    // The client's own setup, an empty state too, starts the verifier's run.
    expect((await change({ state: '', action: 'setup' })).body).toEqual({});
    expect((await sandbox.call('GET', '/__sandbox/report')).body.run).toMatchObject({ name: 'pact' });
  });
});

describe('provider states for a client limited to other couriers', () => {
  it('sets up an order with a courier the client may use, and a refused setup leaves its readiness run as it was', async () => {
    await sandbox.close();
    sandbox = await testSandbox({ clients: [{ token: 'sicepat-only-token', id: 'client-s', couriers: ['sicepat'] }] });
    const asS = (body: unknown) => sandbox.call('POST', '/__sandbox/provider-states', { body, token: 'sicepat-only-token' });
    const runBefore = (await sandbox.call('GET', '/__sandbox/report', { token: 'sicepat-only-token' })).body.run;
    const refused = await asS({ state: 'no such state', action: 'setup' });
    expect(refused.status).toBe(400);
    expect((await sandbox.call('GET', '/__sandbox/report', { token: 'sicepat-only-token' })).body.run).toEqual(runBefore);

    const res = await asS({ state: 'an order is in transit', action: 'setup' });
    expect(res.status).toBe(200);
    const order = await sandbox.call('GET', `/__sandbox/orders/${res.body.order_no}`, { token: 'sicepat-only-token' });
    expect(order.body.courier_code).toBe('sicepat');
  });
});
