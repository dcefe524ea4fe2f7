import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/shared/duration.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, type TestSandbox } from '../support/sandbox.js';

interface Step { key: string; at: string; note: string; status: string | null; pod: boolean }
interface Scenario { name: string; awb: string; awb_failure_reason: string | null; steps: Step[] }

const scenarios: Scenario[] = readdirSync('fixtures/scenarios').map((f) => JSON.parse(readFileSync(`fixtures/scenarios/${f}`, 'utf8')));
const AWB_DELAY = 60_000;

let sandbox: TestSandbox;
beforeEach(async () => {
  sandbox = await testSandbox({ awbDelay: '1m' });
});
afterEach(() => sandbox.close());

describe.each(scenarios.map((s) => [s.name, s] as const))('scenario %s over a manual clock', (name, scenario) => {
  it('plays every step at its time, newest first, with last_status and last_update', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers: { 'X-Sandbox-Scenario': name } });
    expect(created.status).toBe(201);
    const orderNo: string = created.body.order_numbers[0];
    const createdAt = sandbox.services.clock.now();

    const before = await sandbox.call('GET', `/__sandbox/orders/${orderNo}`);
    expect(before.body).toMatchObject({ awb: null, status: 'created', scenario: name, next: { kind: 'awb', due_at: new Date(createdAt + AWB_DELAY).toISOString() } });

    await sandbox.advance(AWB_DELAY - 1);
    expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.awb).toBeNull();
    await sandbox.advance(1);
    const generated = (await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body;

    if (scenario.awb === 'fails') {
      expect(generated).toMatchObject({ status: 'awb_failed', awb: null, awb_error: scenario.awb_failure_reason, next: null });
      return;
    }
    expect(generated.awb).toMatch(/^JN\d{10}$/);
    expect(generated.status).toBe('awb_generated');
    const awbAt = createdAt + AWB_DELAY;
    expect(generated.awb_generated_at).toBe(new Date(awbAt).toISOString());

    const track = () => sandbox.call('GET', `/v1/order/tracking/${generated.awb}`);
    expect((await track()).status).toBe(404);

    let elapsed = 0;
    for (const [i, step] of scenario.steps.entries()) {
      const offset = parseDuration(step.at)!;
      await sandbox.advance(offset - elapsed - 1);
      const justBefore = await track();
      const seenBefore = scenario.steps.slice(0, i);
      if (!seenBefore.some((s) => s.status !== null)) expect(justBefore.status).toBe(404);
      else expect(justBefore.body.history).toHaveLength(i);
      await sandbox.advance(1);
      elapsed = offset;

      const played = scenario.steps.slice(0, i + 1);
      const withStatus = played.filter((s) => s.status !== null);
      const res = await track();
      if (withStatus.length === 0) {
        expect(res.status).toBe(404);
        continue;
      }
      expect(res.status).toBe(200);
      const expected = played
        .map((s) => ({ note: s.note, status: s.status, update_on: Math.floor((awbAt + parseDuration(s.at)!) / 1000), pod: s.pod }))
        .reverse();
      expect(res.body.history.map((e: { note: string; status: string | null; update_on: number; pod_photo: string | null }) => ({
        note: e.note, status: e.status, update_on: e.update_on, pod: e.pod_photo !== null,
      }))).toEqual(expected);
      expect(res.body.last_update).toBe(res.body.history[0].update_on);
      expect(res.body.last_status).toBe(withStatus.at(-1)!.status);
      for (const e of res.body.history) {
        expect(e.description).not.toMatch(/[{}]/);
        expect(e.branch).not.toMatch(/[{}]/);
      }
    }
    const final = (await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body;
    expect(final.next).toBeNull();
    const lastStatus = scenario.steps.filter((s) => s.status !== null).at(-1)?.status;
    const expectedStatus = { '1': 'picked_up', '2': 'delivered', '3': 'delivery_failed', '4': 'returned', '5': 'cancelled' }[lastStatus ?? '1'];
    expect(final.status).toBe(scenario.steps.at(-1)!.status === null && lastStatus === '1' ? 'in_transit' : expectedStatus);
  });
});

describe('delivered journey', () => {
  it('reaches POD within 3 simulated days of the create request', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    await sandbox.advance(3 * 86_400_000);
    const state = (await sandbox.call('GET', `/__sandbox/orders/${created.body.order_numbers[0]}`)).body;
    expect(state.status).toBe('delivered');
    expect(state.history[0].status).toBe('2');
  });

  it('serves the POD photo as a real PNG at the pod_photo address', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    await sandbox.advance(3 * 86_400_000);
    const { awb } = (await sandbox.call('GET', `/__sandbox/orders/${created.body.order_numbers[0]}`)).body;
    const tracking = await sandbox.call('GET', `/v1/order/tracking/${awb}`);
    const url = new URL(tracking.body.history[0].pod_photo);
    const photo = await sandbox.call('GET', url.pathname, { token: null });
    expect(photo.status).toBe(200);
    expect(photo.headers['content-type']).toBe('image/png');
    expect((photo.body as Buffer).subarray(1, 4).toString()).toBe('PNG');
  });
});

describe('control of one order', () => {
  it('generates the AWB now with POST /__sandbox/orders/{order_no}/awb', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    const res = await sandbox.call('POST', `/__sandbox/orders/${created.body.order_numbers[0]}/awb`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'awb_generated', awb: expect.stringMatching(/^JN/), next: { kind: 'step', step: 'pickup' } });
  });

  it('plays the next step, then jumps to a named step, keeping timestamps in order', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    const orderNo = created.body.order_numbers[0];
    await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
    const next = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`);
    expect(next.body.status).toBe('picked_up');
    expect(next.body.history).toHaveLength(1);
    const jumped = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`, { body: { step: 'pod' } });
    expect(jumped.body.status).toBe('delivered');
    const times = jumped.body.history.map((e: { update_on: number }) => e.update_on);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect((await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`)).status).toBe(409);
  });

  it('jumps to a named step without a scan before the AWB: the steps on the way take the AWB\'s time at the earliest', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    const orderNo = created.body.order_numbers[0];
    const generated = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
    const awbSecond = Math.floor(Date.parse(generated.body.awb_generated_at) / 1000);
    await sandbox.advance(3_600_000); // an hour after the AWB: the journey's days must fit in it
    const jumped = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`, { body: { step: 'pod' } });
    expect(jumped.body.status).toBe('delivered');
    const times: number[] = jumped.body.history.map((e: { update_on: number }) => e.update_on);
    expect(times.length).toBeGreaterThan(2);
    expect(Math.min(...times)).toBe(awbSecond);
    expect(Math.max(...times)).toBe(awbSecond + 3600);
    // In order, and apart: squeezed into the hour, not all at one second.
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    expect(new Set(times).size).toBe(times.length);
    const tracking = await sandbox.call('GET', `/v1/order/tracking/${jumped.body.awb}`);
    expect(Math.min(...tracking.body.history.map((e: { update_on: number }) => e.update_on))).toBeGreaterThanOrEqual(awbSecond);
  });

  it('answers 409 to an advance of an order whose AWB failed, saying it will get none rather than to generate it', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1), headers: { 'x-sandbox-scenario': 'awb_failed' } });
    const orderNo = created.body.order_numbers[0];
    expect((await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`)).body.status).toBe('awb_failed');
    const res = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`);
    expect(res.status).toBe(409);
    expect(res.body.message).toBe('The order has no AWB and will not get one (status awb_failed): it has no steps to play. Create an order with another scenario for a journey.');
    const pending = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    expect((await sandbox.call('POST', `/__sandbox/orders/${pending.body.order_numbers[0]}/advance`)).body.message).toBe('The order has no AWB yet: generate it first (POST .../awb).');
  });

  it('answers 400 naming step for a step the scenario does not have', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    const res = await sandbox.call('POST', `/__sandbox/orders/${created.body.order_numbers[0]}/advance`, { body: { step: 'teleport' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('step');
    const beyond = await sandbox.call('POST', `/__sandbox/orders/${created.body.order_numbers[0]}/advance`, { body: { step: 99 } });
    expect([beyond.status, beyond.body.errors[0].field, beyond.body.errors[0].message]).toEqual([400, 'step', expect.stringContaining('its key, or its number from 1')]);
  });

  it('takes a step by its number from 1 too, as a trigger\'s to_step does', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    const orderNo = created.body.order_numbers[0];
    await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
    const second = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`, { body: { step: 2 } });
    expect(second.status).toBe(200);
    expect(second.body.history).toHaveLength(2);
    expect((await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`, { body: { step: '3' } })).body.history).toHaveLength(3);
  });

  it('answers 409 when advancing an order that has no AWB yet', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    expect((await sandbox.call('POST', `/__sandbox/orders/${created.body.order_numbers[0]}/advance`)).status).toBe(409);
  });
});

describe('POST /__sandbox/clock/advance', () => {
  it('moves the manual clock and answers once the AWBs that fell due exist', async () => {
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(3) });
    const before = (await sandbox.call('GET', '/__sandbox/clock')).body;
    const res = await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 60_000 } });
    expect(res.body.now_ms).toBe(before.now_ms + 60_000);
    for (const orderNo of created.body.order_numbers) {
      expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.awb).toMatch(/^JN/);
    }
  });

  it.each([[{ ms: -1 }], [{ ms: '10' }], [{}]])('answers 400 naming ms for %j', async (body) => {
    const res = await sandbox.call('POST', '/__sandbox/clock/advance', { body });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].field).toBe('ms');
  });

  it.each([
    ['POST', '/__sandbox/clock/advance', { ms: 0, msec: 60_000 }, 'msec'],
    ['POST', '/__sandbox/clock/advance-all', { ms: 0, all: true }, 'all'],
    ['PUT', '/__sandbox/clock/speed', { speed: 2, at: 'now' }, 'at'],
  ] as const)('answers %s %s with a field it does not know 400 naming it, and moves nothing', async (method, path, body, field) => {
    await sandbox.close();
    sandbox = await testSandbox({ adminTokens: ['journey-admin-token'] });
    const before = (await sandbox.call('GET', '/__sandbox/clock')).body.now_ms;
    // The sandbox-wide calls are an admin's; a client's advance is its own.
    const res = await sandbox.call(method, path, { body, ...(path.endsWith('/advance') ? {} : { token: 'journey-admin-token' }) });
    expect(res.status).toBe(400);
    expect(res.body.errors).toContainEqual({ field, message: 'is not a known field' });
    expect((await sandbox.call('GET', '/__sandbox/clock')).body.now_ms).toBe(before);
  });

  it("answers an order's advance with a field it does not know 400 naming it, and plays nothing", async () => {
    const [orderNo] = (await sandbox.call('POST', '/v1/order', { body: createRequest(1) })).body.order_numbers as string[];
    await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
    const res = await sandbox.call('POST', `/__sandbox/orders/${orderNo}/advance`, { body: { stepp: 'pickup' } });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'stepp', message: 'is not a known field' }]);
    expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.history).toEqual([]);
  });

  it("jumps the caller's real clock ahead by ms", async () => {
    await sandbox.close();
    sandbox = await testSandbox({ clock: 'real' });
    const before = (await sandbox.call('GET', '/__sandbox/clock')).body;
    const res = await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 86_400_000 } });
    expect(res.status).toBe(200);
    expect(res.body.now_ms - before.now_ms).toBeGreaterThanOrEqual(86_400_000);
  });
});
