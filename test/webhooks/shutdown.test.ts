import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../support/sandbox.js';
import { createSandbox } from '../../src/app/sandbox.js';
import { Unavailable } from '../../src/shared/errors.js';
import { Receiver } from './receiver.js';
import { createOrders, deliveries, webhookSandbox } from './support.js';

let dir: string;
let receiver: Receiver;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'webhook-shutdown-'));
  receiver = await Receiver.start();
});
afterEach(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a stop (close) with an attempt in flight at a slow receiver', () => {
  it('waits for its answer, records it delivered, and the next start on the same data sends nothing again', async () => {
    const data = join(dir, 'sandbox.json');
    receiver.respond = () => ({ status: 200, body: 'ok', delayMs: 1_500 });
    let sandbox: TestSandbox = await webhookSandbox(receiver.url, { data });
    const [orderNo] = await createOrders(sandbox, 1);
    // The scheduler's own advance, which the stop waits for (the clock service's would go on to save the clock after it).
    const advancing = sandbox.services.scheduler.advance('client-a', 60_000);
    while (receiver.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    await sandbox.close();
    await advancing;
    // The close waited for the answer (1.5 s after the POST), not for the whole 10 s timeout.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_300);
    expect(Date.now() - started).toBeLessThan(8_000);

    sandbox = await webhookSandbox(receiver.url, { data });
    try {
      const [recorded] = await deliveries(sandbox);
      expect(recorded).toMatchObject({ order_no: orderNo, event: 'awb.generated', status: 'delivered' });
      expect(recorded!.attempts.map((a) => [a.n, a.status_code])).toEqual([[1, 200]]);
      // Nothing is due again: the restart and a day of its clock send nothing more.
      await sandbox.advance(24 * 3_600_000);
      await new Promise((r) => setTimeout(r, 200));
      expect(receiver.received.map((r) => r.id)).toEqual([recorded!.id]);
    } finally {
      await sandbox.close();
    }
  });

  it('on a real clock: the attempts a wake-up started finish and are recorded; those not started are made once by the next start', async () => {
    const data = join(dir, 'sandbox.json');
    receiver.respond = () => ({ status: 200, body: 'ok', delayMs: 1_000 });
    let sandbox: TestSandbox = await webhookSandbox(receiver.url, { data, clock: 'real', awbDelay: '0' });
    // Ten AWB webhooks, eight of them in flight at once (a client's share of the pool).
    const orders = await createOrders(sandbox, 10);
    while (receiver.received.length < 8) await new Promise((r) => setTimeout(r, 10));
    await sandbox.close();
    const before = receiver.received.map((r) => r.id);
    expect(new Set(before).size).toBe(before.length);
    expect(before.length).toBeLessThan(10);

    receiver.respond = () => ({ status: 200, body: 'ok' });
    sandbox = await webhookSandbox(receiver.url, { data, clock: 'real', awbDelay: '0' });
    try {
      const settled = async () => (await deliveries(sandbox)).filter((d) => d.status === 'delivered').length;
      for (let i = 0; i < 100 && (await settled()) < 10; i += 1) await new Promise((r) => setTimeout(r, 50));
      const listed = await deliveries(sandbox);
      expect(listed.map((d) => d.order_no).sort()).toEqual([...orders].sort());
      expect(listed.every((d) => d.status === 'delivered' && d.attempts.length === 1)).toBe(true);
      // Every webhook-id came once: those in flight at the stop were not made again.
      const ids = receiver.received.map((r) => r.id);
      expect(ids).toHaveLength(10);
      expect(new Set(ids).size).toBe(10);
    } finally {
      await sandbox.close();
    }
  });
});

describe('a webhook module closed (a stop that ran out of time) with an attempt in flight', () => {
  it('aborts it without recording a failure, and the next start makes it', async () => {
    const data = join(dir, 'sandbox.json');
    receiver.respond = () => ({ status: 200, hang: true });
    let sandbox: TestSandbox = await webhookSandbox(receiver.url, { data });
    await createOrders(sandbox, 1);
    const advancing = sandbox.advance(60_000);
    while (receiver.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    const started = Date.now();
    await sandbox.modules.find((m) => m.name === 'webhooks')!.close!();
    await advancing;
    expect(Date.now() - started).toBeLessThan(2_000);
    const [aborted] = await deliveries(sandbox);
    // Its attempt is due again: queued, not failed.
    expect(aborted).toMatchObject({ status: 'queued', attempts: [] });
    await sandbox.close();

    receiver.respond = () => ({ status: 200 });
    sandbox = await webhookSandbox(receiver.url, { data });
    try {
      await sandbox.advance(0);
      const [made] = await deliveries(sandbox);
      expect(made!.id).toBe(aborted!.id);
      expect(made).toMatchObject({ status: 'delivered' });
      expect(made!.attempts.map((a) => [a.n, a.status_code])).toEqual([[1, 200]]);
      expect(receiver.byId(made!.id)).toHaveLength(2);
    } finally {
      await sandbox.close();
    }
  });
});

describe('the webhook client of a sandbox closed straight after it started', () => {
  it('is never made: an attempt routed after the close is refused, and no connection pool is left behind', async () => {
    const sandbox = await createSandbox({ port: 0, data: ':memory:', logLevel: 'silent' });
    await sandbox.close(); // before the webhook client's deferred load ran
    await new Promise((resolve) => setImmediate(resolve));
    expect(() => sandbox.services.webhookTargets.route('http://127.0.0.1:9/hook', true)).toThrow('The webhook client is closed');
  });
});

describe('an attempt whose outcome the store cannot take at once (every connection busy)', () => {
  it('is recorded once the store takes it again, not made a second time', async () => {
    let failRecord = false;
    receiver.respond = () => {
      failRecord = true; // the next unit of work is the one that records this attempt
      return { status: 200, body: 'ok' };
    };
    const sandbox = await webhookSandbox(receiver.url, { data: join(dir, 'sandbox.json') });
    const { storage } = sandbox.services;
    const transaction = storage.transaction.bind(storage);
    let refused = 0;
    storage.transaction = ((fn: Parameters<typeof transaction>[0]) => {
      if (!failRecord) return transaction(fn);
      failRecord = false;
      refused += 1;
      return Promise.reject(new Unavailable('every database connection stayed busy'));
    }) as typeof storage.transaction;
    try {
      await createOrders(sandbox, 1);
      await sandbox.advance(60_000);
      await sandbox.advance(24 * 3_600_000);
      expect(refused).toBe(1);
      const [recorded] = await deliveries(sandbox);
      expect(recorded).toMatchObject({ event: 'awb.generated', status: 'delivered' });
      expect(recorded!.attempts.map((a) => [a.n, a.status_code])).toEqual([[1, 200]]);
      expect(receiver.byId(recorded!.id)).toHaveLength(1);
    } finally {
      await sandbox.close();
    }
  });
});
