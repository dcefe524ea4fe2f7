import { afterEach, beforeEach, expect, it } from 'vitest';
import { TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';
import { createOrders, startWebhookSandbox, stopWebhookSandbox } from '../webhooks/support.js';

let receiver: Receiver;
let sandbox: TestSandbox;
beforeEach(async () => ({ receiver, sandbox } = await startWebhookSandbox({ webhookTimeout: '2s' })));
afterEach(() => stopWebhookSandbox(sandbox, receiver));

it("answers a trigger within the webhook timeout and 2 s, not after the client's whole backlog of due deliveries, showing its own delivery as it stands", async () => {
  // Client B's 40 AWB webhooks, held while it has no URL, all due at once when it sets one; its receiver takes 1.5 s an answer.
  await createOrders(sandbox, 40, {}, TOKEN_B);
  expect((await sandbox.call('POST', '/__sandbox/clock/advance', { token: TOKEN_B, body: { ms: 60_000 } })).status).toBe(200);
  receiver.respond = () => ({ status: 200, body: 'ok', delayMs: 1_500 });
  expect((await sandbox.call('PUT', '/__sandbox/webhook', { token: TOKEN_B, body: { url: receiver.url } })).status).toBe(200);
  const started = Date.now();
  const res = await sandbox.call('POST', '/__sandbox/events/trigger', { token: TOKEN_B, body: { event: 'awb.generated' } });
  const tookMs = Date.now() - started;
  expect(res.status).toBe(200);
  // Eight at a time, the backlog takes five rounds of 1.5 s before the trigger's own: the answer came at the bound (4 s), with it still queued.
  expect(res.body.outcome).toBe('queued');
  expect(tookMs).toBeGreaterThanOrEqual(3_900);
  expect(tookMs).toBeLessThan(7_000);
});
