import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crash } from '../support/store.js';
import { createRequest } from '../support/orders.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { tempDir } from '../support/tmp.js';
import { Receiver } from '../webhooks/receiver.js';
import type { SandboxOptions } from '../../src/config/options.js';
import { deliveries } from '../webhooks/support.js';

describe('a store that cannot write (ENOSPC injected below the journal)', () => {
  const dir = tempDir();
  const open: TestSandbox[] = [];
  const receivers: Receiver[] = [];
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close().catch(() => undefined);
    for (const r of receivers.splice(0)) await r.close();
  });

  /** A sandbox whose client A has one order, and a receiver that fills the disk as it takes the order's AWB webhook: the attempt's outcome cannot be saved. */
  async function diskFillsAtTheWebhook(options: SandboxOptions = {}): Promise<{ receiver: Receiver; fileSystem: FaultyFileSystem; sandbox: TestSandbox }> {
    const receiver = await Receiver.start();
    receivers.push(receiver);
    const fileSystem = new FaultyFileSystem();
    const clients = [
      { token: TOKEN_A, id: 'client-a', webhook: { url: receiver.url } },
      { token: TOKEN_B, id: 'client-b' },
    ];
    const sandbox = await testSandbox({ data: join(dir(), 'sandbox.json'), clients, ...options }, { storeFileSystem: fileSystem });
    open.push(sandbox);
    expect((await sandbox.call('POST', '/v1/order', { body: createRequest(1) })).status).toBe(201);
    // The first webhook only: one that ran again after the disk had room would fill it anew.
    let filled = false;
    receiver.respond = () => {
      if (!filled) fileSystem.failing = 'ENOSPC';
      filled = true;
      return { status: 200, body: 'ok' };
    };
    return { receiver, fileSystem, sandbox };
  }

  it('answers 503 with Retry-After and the envelope, keeps nothing of the refused request, keeps due jobs due, and carries on once space is back', async () => {
    const data = join(dir(), 'sandbox.json');
    const fileSystem = new FaultyFileSystem();
    const first = await testSandbox({ data }, { storeFileSystem: fileSystem });
    const acknowledged: string[] = [];
    const create = async () => {
      const res = await first.call('POST', '/v1/order', { body: createRequest(3) });
      if (res.status === 201) acknowledged.push(...(res.body.order_numbers as string[]));
      return res;
    };
    const total = async (sandbox: TestSandbox) => (await sandbox.call('GET', '/__sandbox/orders?limit=1')).body.total as number;
    expect((await create()).status).toBe(201);

    fileSystem.failing = 'ENOSPC';
    for (let i = 0; i < 3; i += 1) {
      const refused = await create();
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toMatch(/^\d+$/);
      expect(refused.body).toEqual({ success: false, message: expect.stringContaining('ENOSPC'), errors: [] });
    }
    expect(await total(first)).toBe(3); // the refused requests' orders do not exist
    const health = await first.call('GET', '/__sandbox/health', { token: null });
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok', store: 'degraded', store_error: 'ENOSPC' });
    // The AWB jobs that fall due cannot record their work: they stay due, the orders unchanged.
    expect((await first.call('POST', '/__sandbox/clock/advance', { body: { ms: 60_000 } })).status).toBe(503);
    expect((await first.call('GET', `/__sandbox/orders/${acknowledged[0]}`)).body).toMatchObject({ status: 'created', awb: null });

    fileSystem.failing = undefined;
    expect((await create()).status).toBe(201);
    expect((await first.call('GET', '/__sandbox/health', { token: null })).body).toMatchObject({ store: 'ok' });
    expect((await first.call('POST', '/__sandbox/clock/advance', { body: { ms: 0 } })).status).toBe(200);
    expect((await first.call('GET', `/__sandbox/orders/${acknowledged[0]}`)).body.awb).toEqual(expect.any(String));

    // A crash now (the process gone, nothing flushed): the restart finds exactly the acknowledged orders.
    crash(data);
    const second = await testSandbox({ data });
    open.push(second);
    expect(await total(second)).toBe(acknowledged.length);
    for (const orderNo of acknowledged) expect((await second.call('GET', `/__sandbox/orders/${orderNo}`)).status).toBe(200);
  });

  it('answers an advance whose due jobs could not be saved with 503, though the clock could be (a disk all but full), and runs them at the next advance once there is room', async () => {
    const fileSystem = new FaultyFileSystem();
    const sandbox = await testSandbox({ data: join(dir(), 'sandbox.json') }, { storeFileSystem: fileSystem });
    open.push(sandbox);
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(3) });
    expect(created.status).toBe(201);
    fileSystem.failingAbove = 400;
    const advanced = await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 60_000 } });
    expect(advanced.status).toBe(503);
    expect(advanced.headers['retry-after']).toMatch(/^\d+$/);
    expect(advanced.body.message).toMatch(/could not be saved.*still due/);
    expect(advanced.body.message).toMatch(/\(it was to reach \d{4}-\d\d-\d\dT[\d:.]+Z\)$/);
    const [orderNo] = created.body.order_numbers as string[];
    expect((await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body).toMatchObject({ status: 'created', awb: null });

    fileSystem.failingAbove = undefined;
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 0 } })).status).toBe(200);
    for (const no of created.body.order_numbers as string[]) expect((await sandbox.call('GET', `/__sandbox/orders/${no}`)).body.awb).toEqual(expect.any(String));
  });

  it('runs on a real clock, once there is room, the jobs an advance could not save, without another advance', async () => {
    const fileSystem = new FaultyFileSystem();
    const sandbox = await testSandbox({ data: join(dir(), 'sandbox.json'), clock: 'real', awbDelay: '30m' }, { storeFileSystem: fileSystem });
    open.push(sandbox);
    const created = await sandbox.call('POST', '/v1/order', { body: createRequest(3) });
    fileSystem.failingAbove = 400;
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 3_600_000 } })).status).toBe(503);
    fileSystem.failingAbove = undefined;
    const awbs = () => Promise.all((created.body.order_numbers as string[]).map(async (no) => (await sandbox.call('GET', `/__sandbox/orders/${no}`)).body.awb as string | null));
    await expect.poll(awbs, { timeout: 10_000, interval: 250 }).toEqual([expect.any(String), expect.any(String), expect.any(String)]);
  });

  it('answers a reset a full disk stops with 503 saying it stopped part-way, and removes the rest once there is room', async () => {
    const fileSystem = new FaultyFileSystem();
    const sandbox = await testSandbox({ data: join(dir(), 'sandbox.json') }, { storeFileSystem: fileSystem });
    open.push(sandbox);
    expect((await sandbox.call('POST', '/v1/order', { body: createRequest(3) })).status).toBe(201);
    fileSystem.failingAbove = 0;
    const reset = await sandbox.call('POST', '/__sandbox/reset');
    expect(reset.status).toBe(503);
    expect(reset.body.message).toMatch(/^The reset stopped part-way.*run it again/);
    fileSystem.failingAbove = undefined;
    expect((await sandbox.call('POST', '/__sandbox/reset')).status).toBe(200);
    expect((await sandbox.call('GET', '/__sandbox/orders')).body.total).toBe(0);
  });

  it('answers an advance 503 once the disk is full while its webhook attempt waits to save what the receiver answered, without waiting for the attempt to give up; the attempt saves it once there is room, and the receiver gets the webhook once', async () => {
    // The attempt keeps trying to save its outcome (most of a minute with these options), as a receiver must not get the webhook twice.
    const { receiver, fileSystem, sandbox } = await diskFillsAtTheWebhook();
    const advanced = await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 60_000 } });
    expect(advanced.status).toBe(503);
    expect(advanced.body.message).toMatch(/could not be saved.*still due/);
    expect(receiver.received).toHaveLength(1);
    const [pending] = await deliveries(sandbox);
    expect(pending).toMatchObject({ event: 'awb.generated', status: 'queued', attempts: [] });

    fileSystem.failing = undefined;
    await expect.poll(async () => (await deliveries(sandbox))[0]?.status, { timeout: 5_000 }).toBe('delivered');
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 0 } })).status).toBe(200);
    const [delivered] = await deliveries(sandbox);
    expect(delivered!.attempts).toHaveLength(1);
    expect(receiver.received.map((webhook) => webhook.id)).toEqual([pending!.id]);
  });

  it('runs a webhook job again on a real clock once there is room, when its attempt gave up saving after the advance that started it had answered 503', async () => {
    // The attempt tries to save its outcome for 4 s (a claim of 6 s, less the 1 s timeout, less 1 s).
    const { fileSystem, sandbox } = await diskFillsAtTheWebhook({ clock: 'real', jobLease: '6s', webhookTimeout: '1s' });
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 60_000 } })).status).toBe(503);
    // The attempt gives up meanwhile, its job due again; then the disk has room.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    fileSystem.failing = undefined;
    await expect.poll(async () => (await deliveries(sandbox))[0]?.status, { timeout: 10_000, interval: 250 }).toBe('delivered');
  });

  it('lets every client’s advance of an advance-all end and saves every clock before it answers 503 for one whose jobs could not be saved', async () => {
    const data = join(dir(), 'sandbox.json');
    const fileSystem = new FaultyFileSystem();
    const sandbox = await testSandbox({ data, adminTokens: ['admin-all'] }, { storeFileSystem: fileSystem });
    const clockOf = async (s: TestSandbox, token: string) => (await s.call('GET', '/__sandbox/clock', { token })).body.now_ms as number;
    const startB = await clockOf(sandbox, TOKEN_B);
    expect((await sandbox.call('POST', '/v1/order', { body: createRequest(3) })).status).toBe(201);
    fileSystem.failingAbove = 400;
    const res = await sandbox.call('POST', '/__sandbox/clock/advance-all', { token: 'admin-all', body: { ms: 3_600_000 } });
    expect(res.status).toBe(503);
    expect(res.body.message).toMatch(/could not be saved.*still due/);
    expect(await clockOf(sandbox, TOKEN_B)).toBe(startB + 3_600_000);
    fileSystem.failingAbove = undefined;
    await sandbox.close();

    // A restart finds client B's clock where the advance took it: it was saved, not lost with the 503.
    const again = await testSandbox({ data });
    open.push(again);
    expect(await clockOf(again, TOKEN_B)).toBe(startB + 3_600_000);
  });

  it('plays the tracking steps that fell due while the disk was full once it has room again, without a restart', async () => {
    const fileSystem = new FaultyFileSystem();
    const sandbox = await testSandbox({ data: join(dir(), 'sandbox.json') }, { storeFileSystem: fileSystem });
    open.push(sandbox);
    const orders = (await sandbox.call('POST', '/v1/order', { body: createRequest(3) })).body.order_numbers as string[];
    const statuses = () => Promise.all(orders.map(async (orderNo) => (await sandbox.call('GET', `/__sandbox/orders/${orderNo}`)).body.status as string));
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 60_000 } })).status).toBe(200);
    expect(await statuses()).toEqual(['awb_generated', 'awb_generated', 'awb_generated']);

    fileSystem.failing = 'ENOSPC';
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 2 * 3_600_000 } })).status).toBe(503);
    fileSystem.failing = undefined;
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 10 * 3_600_000 } })).status).toBe(200);
    for (const status of await statuses()) expect(status).not.toBe('awb_generated');
  });

  it('holds deliveries up to --outbox-size once the disk has room again, as if the refused commit never happened', async () => {
    const fileSystem = new FaultyFileSystem();
    const sandbox = await testSandbox({ data: join(dir(), 'sandbox.json'), outboxSize: 2 }, { storeFileSystem: fileSystem });
    open.push(sandbox);
    // Client B has no webhook URL: its AWB webhooks are held, two at most.
    await sandbox.call('POST', '/v1/order', { token: TOKEN_B, body: createRequest(3) });
    fileSystem.failing = 'ENOSPC';
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { token: TOKEN_B, body: { ms: 60_000 } })).status).toBe(503);
    fileSystem.failing = undefined;
    expect((await sandbox.call('POST', '/__sandbox/clock/advance', { token: TOKEN_B, body: { ms: 0 } })).status).toBe(200);
    const log = (await sandbox.call('GET', '/__sandbox/webhooks/deliveries', { token: TOKEN_B })).body.deliveries as Array<{ status: string }>;
    expect(log.map((delivery) => delivery.status).sort()).toEqual(['failed', 'paused', 'paused']);
  });
});
