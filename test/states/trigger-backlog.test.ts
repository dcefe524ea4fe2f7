import { afterEach, beforeEach, expect, it } from 'vitest';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from '../webhooks/receiver.js';
import { createOrders, deliveries, startWebhookSandbox, stopWebhookSandbox } from '../webhooks/support.js';

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

it("leaves the client's other webhooks and AWBs running on a real clock while a trigger waits for its own slow first attempt, each attempt logged when it was made", async () => {
  await stopWebhookSandbox(sandbox, receiver);
  ({ receiver, sandbox } = await startWebhookSandbox({ clock: 'real', awbDelay: '0s', webhookTimeout: '3s' }));
  // The trigger's webhook comes first and is answered past the timeout; every other at once.
  receiver.respond = (_webhook, index) => (index === 0 ? { status: 200, body: 'late', delayMs: 5_000 } : { status: 200, body: 'ok' });
  const triggered = sandbox.call('POST', '/__sandbox/events/trigger', { body: { event: 'awb.generated' } });
  while (receiver.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
  const createdAt = Date.now();
  const [orderNo] = await createOrders(sandbox, 1);
  while (receiver.received.length < 2 && Date.now() - createdAt < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
  const heardMs = Date.now() - createdAt;
  expect((await triggered).body.outcome).toBe('pending');
  // The new order's AWB webhook came while the trigger's attempt still waited (it waited for the 3 s timeout before).
  expect(heardMs).toBeLessThan(2_000);
  const [own] = await deliveries(sandbox, `&order_no=${orderNo}`);
  expect(Date.parse(own!.attempts[0]!.at ?? '')).toBeGreaterThanOrEqual(createdAt - 5);
});

it('answers a trigger on a real clock with the copies its chaos sends after the first attempt', async () => {
  await stopWebhookSandbox(sandbox, receiver);
  receiver = await Receiver.start();
  sandbox = await testSandbox({ clock: 'real', clients: [{ token: TOKEN_A, id: 'client-a', webhook: { url: receiver.url, chaos: ['duplicate', 'bad_signature'] } }] });
  // Each answered 300 ms later: the copies follow the acknowledged attempt, and the answer must not leave before them.
  receiver.respond = (_webhook, index) => ({ status: index === 0 ? 200 : 400, body: 'ok', delayMs: 300 });
  const res = await sandbox.call('POST', '/__sandbox/events/trigger', { body: { event: 'awb.generated' } });
  expect(res.body.outcome).toBe('delivered');
  const attempts: Array<{ chaos: string | null; at: string }> = res.body.deliveries[0].attempts;
  expect(attempts.map((a) => a.chaos)).toEqual([null, 'duplicate', 'bad_signature']);
  // Each logged when it was sent, as the receiver saw them: after the answer to the one before.
  const times = attempts.map((a) => Date.parse(a.at));
  expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(290);
  expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(290);
});

it("answers a trigger within 25 s however long --webhook-timeout is, before the trigger command's default --timeout (30 s)", async () => {
  await stopWebhookSandbox(sandbox, receiver);
  ({ receiver, sandbox } = await startWebhookSandbox({ clock: 'real', webhookTimeout: '60s' }));
  receiver.respond = () => ({ status: 200, body: 'late', delayMs: 30_000 });
  const started = Date.now();
  const res = await sandbox.call('POST', '/__sandbox/events/trigger', { body: { event: 'awb.generated' } });
  const tookMs = Date.now() - started;
  expect(res.status).toBe(200);
  expect(res.body.outcome).toBe('queued');
  expect(tookMs).toBeGreaterThanOrEqual(24_900);
  expect(tookMs).toBeLessThan(29_000);
}, 60_000);
