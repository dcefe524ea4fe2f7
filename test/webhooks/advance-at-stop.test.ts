import { expect, it } from 'vitest';
import { createOrders, startWebhookSandbox } from './support.js';

// A stop (SIGTERM, a container's stop) lets the webhook attempt in flight finish and then runs nothing more: an advance
// it cuts short must not answer as if all that fell due had run.
it('answers an advance the sandbox stop cuts short 503, saying the rest runs at the next start, not 200', async () => {
  const { receiver, sandbox } = await startWebhookSandbox();
  try {
    // Two orders whose AWBs fall due 30 s apart (the AWB delay is a minute); the receiver takes a second per webhook.
    receiver.respond = () => ({ status: 200, delayMs: 1_000 });
    await createOrders(sandbox, 1);
    await sandbox.advance(30_000);
    await createOrders(sandbox, 1);
    const advancing = sandbox.call('POST', '/__sandbox/clock/advance', { body: { ms: 120_000 } });
    await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1);
    const stopping = sandbox.close();
    const answer = await advancing;
    await stopping;
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toBeDefined();
    expect(answer.body.message).toMatch(/^The sandbox is stopping: this advance ended before all that fell due on the way had run\. The rest runs at its next start/);
    // The attempt in flight finished and was answered; the second AWB was not made.
    expect(receiver.received).toHaveLength(1);
  } finally {
    await receiver.close();
  }
});
