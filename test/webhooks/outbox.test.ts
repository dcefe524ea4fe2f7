import { afterEach, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../support/sandbox.js';
import type { Receiver } from './receiver.js';
import { createOrders, deliveries, startWebhookSandbox, stopWebhookSandbox } from './support.js';

// The bound on held deliveries and its warning: test/isolation/limits.test.ts; 20,000 orders with no URL: test/load/outbox.load.ts.
describe('the webhook outbox bound (--outbox-size)', () => {
  let sandbox: TestSandbox;
  let receiver: Receiver;
  afterEach(async () => stopWebhookSandbox(sandbox, receiver));

  it('attempts and delivers every delivery due to a live endpoint, however many more than the bound wait at once', async () => {
    ({ sandbox, receiver } = await startWebhookSandbox({ outboxSize: 5 }));
    for (let i = 0; i < 3; i += 1) await createOrders(sandbox, 10);
    await sandbox.advance(60_000); // 30 AWBs, 30 deliveries due at the same moment
    const log = await deliveries(sandbox);
    expect(log).toHaveLength(30);
    expect(log.filter((d) => d.status !== 'delivered')).toEqual([]);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(30);
  });
});
