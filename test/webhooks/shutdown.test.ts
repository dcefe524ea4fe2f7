import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../support/sandbox.js';
import { createSandbox } from '../../src/app/sandbox.js';
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

describe('shutdown with an attempt in flight', () => {
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
