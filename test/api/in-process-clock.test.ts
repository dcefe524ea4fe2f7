import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { LATEST_CLOCK_MS, LATEST_CLOCK_START_MS } from '../../src/clock/index.js';
import { createRequest } from '../support/orders.js';

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

describe('sandbox.clock, the in-process clock API', () => {
  it('refuses an advance the control API would refuse, naming it, and leaves every clock and order as they were', async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: ['tok-a'], seed: 'clock' });
    const created = await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers: { authorization: 'Bearer tok-a', 'content-type': 'application/json' }, body: JSON.stringify(createRequest(1)) });
    expect(created.status).toBe(201);
    const clientId = sandbox.clients[0]!.id;
    const before = { sandbox: sandbox.clock.now(), client: sandbox.clock.of(clientId) };
    for (const ms of [Number.NaN, -3_600_000, 1.5, 1e17, 31_536_000_001, '1000' as unknown as number]) {
      await expect(sandbox.clock.advance(ms)).rejects.toThrow(/sandbox\.clock\.advance: ms must be a whole number of milliseconds from 0 to 31536000000/);
      await expect(sandbox.clock.advanceClient(clientId, ms)).rejects.toThrow(/sandbox\.clock\.advanceClient: ms must be/);
    }
    await expect(sandbox.clock.advanceClient('nobody', 1_000)).rejects.toThrow(/no client "nobody" is configured/);
    expect({ sandbox: sandbox.clock.now(), client: sandbox.clock.of(clientId) }).toEqual(before);
    const clock = await fetch(`${sandbox.url}/__sandbox/clock`, { headers: { authorization: 'Bearer tok-a' } });
    expect(clock.status).toBe(200);

    // A good advance still runs what falls due: the order's AWB a minute later.
    await sandbox.clock.advanceClient(clientId, 60_000);
    expect(sandbox.clock.of(clientId)).toBe(before.client + 60_000);
    const orders = (await (await fetch(`${sandbox.url}/__sandbox/orders`, { headers: { authorization: 'Bearer tok-a' } })).json()) as { orders: Array<{ status: string }> };
    expect(orders.orders.map((o) => o.status)).toEqual(['awb_generated']);
  });

  it("advances every clock as advance-all does: a client near the latest time stops there, it does not hold up the others", async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: ['tok-a', 'tok-b'], seed: 'clock', clockStart: String(LATEST_CLOCK_START_MS) });
    const [a, b] = sandbox.clients.map((c) => c.id) as [string, string];
    const YEAR = 31_536_000_000;
    while (sandbox.clock.of(a) + YEAR <= LATEST_CLOCK_MS) await sandbox.clock.advanceClient(a, YEAR);
    await expect(sandbox.clock.advanceClient(a, YEAR)).rejects.toThrow(/would move the clock past/);
    const before = sandbox.clock.of(b);
    await sandbox.clock.advance(YEAR);
    expect(sandbox.clock.of(b)).toBe(before + YEAR);
    expect(sandbox.clock.of(a)).toBeLessThanOrEqual(LATEST_CLOCK_MS);
  });

  it('refuses the time of a client that is not configured, naming it, as advanceClient does', async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: ['tok-a'], seed: 'clock' });
    const clientId = sandbox.clients[0]!.id;
    expect(() => sandbox!.clock.of('nobody')).toThrow(new RangeError(`sandbox.clock.of: no client "nobody" is configured (its clients: ${clientId})`));
    await expect(sandbox.clock.advanceClient('nobody', 1_000)).rejects.toThrow(new RangeError(`sandbox.clock.advanceClient: no client "nobody" is configured (its clients: ${clientId})`));
    expect(sandbox.clock.of(clientId)).toBe(sandbox.clock.now());
  });

  it('refuses an advance once close() was called, saying the sandbox is closed, and moves no clock; close() again is harmless', async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: ['tok-a'], seed: 'clock' });
    const clientId = sandbox.clients[0]!.id;
    const before = { sandbox: sandbox.clock.now(), client: sandbox.clock.of(clientId) };
    await sandbox.close();
    await expect(sandbox.clock.advance(60_000)).rejects.toThrow(new Error('sandbox.clock.advance: the sandbox is closed (close() was called): start another with createSandbox()'));
    await expect(sandbox.clock.advanceClient(clientId, 60_000)).rejects.toThrow(new Error('sandbox.clock.advanceClient: the sandbox is closed (close() was called): start another with createSandbox()'));
    expect({ sandbox: sandbox.clock.now(), client: sandbox.clock.of(clientId) }).toEqual(before);
    await expect(sandbox.close()).resolves.toBeUndefined();
  });

  it('takes a number as the seed, the same seed as its text', async () => {
    const tokens = [];
    for (const seed of [42, '42']) {
      sandbox = await createSandbox({ clock: 'manual', seed });
      tokens.push(sandbox.clients[0]!.token);
      await sandbox.close();
      sandbox = undefined;
    }
    expect(tokens[0]).toMatch(/^sbx_[0-9a-f]{8}$/);
    expect(tokens[1]).toBe(tokens[0]);
  });
});
