import { afterAll, describe, expect, it, vi } from 'vitest';
import { TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { createOrders, startWebhookSandbox, stopWebhookSandbox } from '../webhooks/support.js';
import type { Receiver } from '../webhooks/receiver.js';

describe('20,000 orders of a client with no webhook URL (--outbox-size 10000)', () => {
  let sandbox: TestSandbox;
  let receiver: Receiver;
  afterAll(async () => stopWebhookSandbox(sandbox, receiver));

  it('hold 10,000 deliveries, keep the rest as failed "Outbox full", and log one warning, not one per order', async () => {
    ({ sandbox, receiver } = await startWebhookSandbox({ outboxSize: 10_000 }));
    const warn = vi.spyOn(sandbox.services.logger, 'warn');
    // Client B has no webhook URL; client A's deliveries go to the receiver and never count.
    for (let i = 0; i < 2_000; i += 1) await createOrders(sandbox, 10, {}, TOKEN_B);
    await createOrders(sandbox, 10, {}, TOKEN_A);
    await sandbox.advance(60_000); // every AWB: 20,010 awb.generated events

    const total = async (token: string, status: string) =>
      (await sandbox.call('GET', `/__sandbox/webhooks/deliveries?limit=1&status=${status}`, { token })).body.total as number;
    expect(await total(TOKEN_B, 'paused')).toBe(10_000);
    expect(await total(TOKEN_B, 'failed')).toBe(10_000);
    expect(await total(TOKEN_A, 'delivered')).toBe(10);
    const lines = warn.mock.calls.length;
    console.log(`[outbox] 20,000 orders with no webhook URL, --outbox-size 10000: ${lines} warning line(s)`);
    expect(lines).toBeGreaterThanOrEqual(1);
    expect(lines).toBeLessThanOrEqual(3); // one a minute per client: the run takes well under three minutes
    expect(warn.mock.calls[0]![0]).toMatchObject({ client: 'client-b', held: 10_000, outbox_size: 10_000 });
  });
});
