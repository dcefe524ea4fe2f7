import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';
import { createOrders, startWebhookSandbox, stopWebhookSandbox } from '../webhooks/support.js';
import { cancel, MINUTE } from './orders.js';

let receiver: Receiver;
let sandbox: TestSandbox;
beforeEach(async () => ({ receiver, sandbox } = await startWebhookSandbox()));
afterEach(() => stopWebhookSandbox(sandbox, receiver));

describe('POST /v1/order/cancel and the webhook', () => {
  it('sends order.cancelled to a client with a webhook, with the AWB or null', async () => {
    const [beforeAwb, afterAwb] = await createOrders(sandbox, 2);
    expect((await cancel(sandbox, { order_no: beforeAwb })).status).toBe(200);
    await sandbox.advance(MINUTE); // the other gets its AWB
    expect((await cancel(sandbox, { order_no: afterAwb })).status).toBe(200);
    await sandbox.advance(MINUTE);

    const events = receiver.received.map((r) => r.json);
    const cancelled = events.filter((e) => e.event === 'order.cancelled');
    expect(cancelled).toEqual([
      expect.objectContaining({ order_no: beforeAwb, awb: null, cancelled_at: expect.any(Number) }),
      expect.objectContaining({ order_no: afterAwb, awb: expect.stringMatching(/^JN/) }),
    ]);
    // No AWB webhook for the order cancelled before its AWB.
    expect(events.filter((e) => e.event === 'awb.generated').map((e) => e.order_no)).toEqual([afterAwb]);
  });
});
