import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveOptions } from '../../src/config/index.js';
import { RETENTION_EVERY_MS, retentionModule } from '../../src/app/modules/retention.js';
import { buildServices } from '../../src/app/sandbox.js';
import { createRequest } from '../support/orders.js';
import { defaultTestOptions, testSandbox, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { tempDir } from '../support/tmp.js';

const DAY = 86_400_000;

let sandbox: TestSandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

async function createOrder(s: TestSandbox): Promise<{ orderNo: string; awb: string }> {
  const res = await s.call('POST', '/v1/order', { body: createRequest(1) });
  expect(res.status).toBe(201);
  const orderNo = res.body.order_numbers[0] as string;
  const state = await s.call('POST', `/__sandbox/orders/${orderNo}/awb`);
  return { orderNo, awb: state.body.awb as string };
}

const statusOf = async (s: TestSandbox, orderNo: string) => (await s.call('GET', `/__sandbox/orders/${orderNo}`)).status;

describe('--retention (manual clock)', () => {
  it('removes orders older than the retention at the next hourly sweep and keeps newer ones', async () => {
    sandbox = await testSandbox({ retention: '30d' });
    const old = await createOrder(sandbox);
    await sandbox.advance(20 * DAY);
    const recent = await createOrder(sandbox);
    await sandbox.advance(10 * DAY - RETENTION_EVERY_MS);
    expect(await statusOf(sandbox, old.orderNo)).toBe(200);

    await sandbox.advance(2 * RETENTION_EVERY_MS);
    expect(await statusOf(sandbox, old.orderNo)).toBe(404);
    expect((await sandbox.call('GET', `/v1/order/tracking/${old.awb}`)).status).toBe(404);
    expect(await statusOf(sandbox, recent.orderNo)).toBe(200);
    expect((await sandbox.call('GET', `/v1/order/tracking/${recent.awb}`)).status).toBe(200);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(1);
  });

  it("removes a client's orders by its own clock, so one that moved its clock a year on keeps nothing past the retention", async () => {
    sandbox = await testSandbox({ retention: '30d' });
    // Client A's clock a year ahead of the sandbox's: its orders carry times a year on.
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 365 * DAY } })).status).toBe(200);
    const ahead = await createOrder(sandbox);
    await sandbox.advance(31 * DAY);
    const other = await sandbox.call('POST', '/v1/order', { body: createRequest(1), token: TOKEN_B });
    const recent = other.body.order_numbers[0] as string;
    await sandbox.advance(2 * RETENTION_EVERY_MS);
    // 31 days old on A's own clock: gone, though on the sandbox's it is not made yet.
    expect(await statusOf(sandbox, ahead.orderNo)).toBe(404);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(0);
    expect((await sandbox.call('GET', `/__sandbox/orders/${recent}`, { token: TOKEN_B })).status).toBe(200);
  });

  it('removes an order that changed since the sweep found it (its AWB or a step in between), not failing on the version it found', async () => {
    sandbox = await testSandbox({ retention: '30d' });
    const res = await sandbox.call('POST', '/v1/order', { body: createRequest(1) });
    const orderNo = res.body.order_numbers[0] as string;
    const { orders: repository } = sandbox.services.storage;
    const stale = (await repository.get(orderNo))!;
    await sandbox.call('POST', `/__sandbox/orders/${orderNo}/awb`);
    const createdBefore = repository.createdBefore.bind(repository);
    let calls = 0;
    const spy = vi.spyOn(repository, 'createdBefore').mockImplementation(async (olderThan, limit) => (calls++ === 0 ? [stale] : createdBefore(olderThan, limit)));
    try {
      expect(await sandbox.services.orders.removeOlderThan(stale.created_at + 1)).toBe(1);
    } finally {
      spy.mockRestore();
    }
    expect(await statusOf(sandbox, orderNo)).toBe(404);
  });

  it('goes on sweeping every hour after a sweep that failed', async () => {
    sandbox = await testSandbox({ retention: '30d' });
    const old = await createOrder(sandbox);
    // Every sweep fails for a day and a half of sandbox time (a store that cannot write, say); then the store recovers.
    const failing = vi.spyOn(sandbox.services.orders, 'removeOlderThan').mockRejectedValue(new Error('the store cannot write'));
    try {
      await sandbox.advance(30 * DAY + 12 * RETENTION_EVERY_MS);
      expect(failing.mock.calls.length).toBeGreaterThan(5);
      expect(await statusOf(sandbox, old.orderNo)).toBe(200);
    } finally {
      failing.mockRestore();
    }
    await sandbox.advance(RETENTION_EVERY_MS);
    expect(await statusOf(sandbox, old.orderNo)).toBe(404);
  });

  it('keeps every order when no retention is set', async () => {
    sandbox = await testSandbox();
    const old = await createOrder(sandbox);
    await sandbox.advance(365 * DAY);
    expect(await statusOf(sandbox, old.orderNo)).toBe(200);
  });

  describe('at start', () => {
    const dir = tempDir();
    afterEach(async () => {
      await sandbox?.close();
      sandbox = undefined;
    });

    it('removes the orders of a data file that are already older than the retention', async () => {
      const data = join(dir(), 'sandbox.json');
      sandbox = await testSandbox({ data });
      const old = await createOrder(sandbox);
      await sandbox.advance(31 * DAY);
      const recent = await createOrder(sandbox);
      await sandbox.close();

      sandbox = await testSandbox({ data, retention: '30d' });
      expect(await statusOf(sandbox, old.orderNo)).toBe(404);
      expect(await statusOf(sandbox, recent.orderNo)).toBe(200);
    });
  });

  it("calls every module's prune hook with the cut-off time of the sandbox clock, and first with a client's own for a client whose clock is ahead", async () => {
    const services = await buildServices({ ...defaultTestOptions, retention: '2d' });
    const prune = vi.fn(async (_olderThan: number, _clientId?: string) => 0);
    const everyone = () => prune.mock.calls.filter(([, clientId]) => clientId === undefined).map(([olderThan]) => olderThan);
    const start = services.clock.now();
    await retentionModule(services, [{ name: 'deliveries', prune }]).start!();
    expect(everyone()).toEqual([start - 2 * DAY]);
    await services.advanceClock(3 * RETENTION_EVERY_MS);
    expect(everyone()).toHaveLength(4);
    expect(everyone().at(-1)).toBe(start + 3 * RETENTION_EVERY_MS - 2 * DAY);
    // Client A's clock a day ahead: its records go by its own clock, before everyone's by the sandbox's.
    await services.clockService.advance('client-a', DAY);
    prune.mockClear();
    await services.advanceClock(RETENTION_EVERY_MS);
    const [[own, ownClient], [all, allClient]] = prune.mock.calls as [[number, string], [number, undefined]];
    expect([ownClient, allClient, prune.mock.calls.length]).toEqual(['client-a', undefined, 2]);
    expect(all).toBe(start + 4 * RETENTION_EVERY_MS - 2 * DAY);
    // About a day further on: A's clock as it stood when the sweep ran (an advance moves the clients' clocks around its jobs).
    expect(own - all).toBeGreaterThanOrEqual(DAY - RETENTION_EVERY_MS);
    expect(own - all).toBeLessThanOrEqual(DAY);
    await services.scheduler.stop();
    await services.storage.close();
  });

  it('refuses a retention that is not a duration, naming it', async () => {
    await expect(buildServices({ ...defaultTestOptions, retention: 'soon' })).rejects.toThrow(/retention "soon" is not a duration/);
  });
});

describe('the retention option', () => {
  it.each([
    ['30d', 30 * DAY],
    ['12h', 12 * 3_600_000],
    ['1d12h', 1.5 * DAY],
  ])('reads %j as %j ms', (text, ms) => {
    expect(resolveOptions({ retention: text }).retention).toBe(ms);
  });

  it.each(['0d', 'soon', '-1d'])('refuses %j', (text) => {
    expect(() => resolveOptions({ retention: text })).toThrow(/retention ".*" is not a duration above 0/);
  });

  it.each(['0', '200000'])('refuses %j, a number without a unit, saying what it would mean', (text) => {
    expect(() => resolveOptions({ retention: text })).toThrow(/has no unit: use for example 30d, 12h or 90m \(a bare number would be milliseconds; a count of orders is --retention-orders\)/);
  });
});
