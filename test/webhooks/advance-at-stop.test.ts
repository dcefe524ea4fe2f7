import { join } from 'node:path';
import { expect, it } from 'vitest';
import { tempDir } from '../support/tmp.js';
import { createOrders, startWebhookSandbox, webhookSandbox } from './support.js';

const dir = tempDir();

// A stop (SIGTERM, a container's stop) lets the webhook attempt in flight finish and then runs nothing more: an advance
// it cuts short must not answer as if all that fell due had run.
it('answers an advance the sandbox stop cuts short 503, and what was left runs at the next start', async () => {
  const data = join(dir(), 'sandbox.json');
  const { receiver, sandbox } = await startWebhookSandbox({ data });
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
    expect(answer.body.message).toMatch(/^The sandbox is stopping: this advance ended before all that fell due on the way had run\. The clock stands at its target, and what was left stays due: it runs at the next start/);
    // The attempt in flight finished and was answered; the second AWB was not made.
    expect(receiver.received).toHaveLength(1);

    // Started again on the same data: the second AWB is made and sent at the start, and the clock stands at the target.
    receiver.respond = () => ({ status: 200 });
    const again = await webhookSandbox(receiver.url, { data });
    try {
      await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(2);
      const target = /\(it was to reach (\S+)\)$/.exec(answer.body.message as string);
      expect(target, answer.body.message).not.toBeNull();
      expect((await again.call('GET', '/__sandbox/clock')).body).toMatchObject({ now: target![1] });
    } finally {
      await again.close();
    }
  } finally {
    await receiver.close();
  }
});
