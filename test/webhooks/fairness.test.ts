import { afterEach, describe, expect, it } from 'vitest';
import { WEBHOOK_CONCURRENCY } from '../../src/webhooks/job.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import { Receiver } from './receiver.js';
import { createOrders, deliveries } from './support.js';

// Client A's receiver never answers; client B's answers at once. A's attempts must use
// A's share of the webhook pool and hold up neither B's webhooks nor anyone's AWBs.
const TIMEOUT_MS = 2_000;
let silent: Receiver;
let healthy: Receiver;
let sandbox: TestSandbox | undefined;

async function start(clock: 'manual' | 'real'): Promise<TestSandbox> {
  silent = await Receiver.start();
  silent.respond = () => ({ status: 200, hang: true });
  healthy = await Receiver.start();
  sandbox = await testSandbox({
    clock,
    awbDelay: clock === 'manual' ? '1m' : '300ms',
    webhookTimeout: `${TIMEOUT_MS}ms`,
    webhookRetries: '0',
    clients: [
      { token: TOKEN_A, id: 'client-a', webhook: { url: silent.url } },
      { token: TOKEN_B, id: 'client-b', webhook: { url: healthy.url } },
    ],
  });
  return sandbox;
}

afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
  await silent?.close();
  await healthy?.close();
});

const until = async (check: () => boolean | Promise<boolean>, ms: number): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('a silent receiver of one client', () => {
  it('with a manual clock: another client’s webhook arrives at once, and each AWB is stamped with its due time', async () => {
    const box = await start('manual');
    await createOrders(box, 3 * WEBHOOK_CONCURRENCY.perClient, {}, TOKEN_A);
    const [orderB] = await createOrders(box, 1, {}, TOKEN_B);
    const started = Date.now();
    const advancing = box.advance(60_000);
    await until(() => healthy.received.length === 1, TIMEOUT_MS);
    const waitedForB = Date.now() - started;
    // A's attempts run at most perClient at a time, so the advance waits for three rounds of timeouts.
    expect(silent.received.length).toBeLessThanOrEqual(WEBHOOK_CONCURRENCY.perClient);
    await advancing;
    expect(waitedForB).toBeLessThan(TIMEOUT_MS);
    expect(silent.received.length).toBe(3 * WEBHOOK_CONCURRENCY.perClient);
    const order = (await box.call('GET', `/__sandbox/orders/${orderB}`, { token: TOKEN_B })).body;
    expect(order.awb_generated_at).toBe(order.awb_due_at);
    const [delivered] = await deliveries(box, '', TOKEN_B);
    expect(delivered).toMatchObject({ status: 'delivered' });
    expect((await deliveries(box)).every((d) => d.status === 'failed' && d.attempts.length === 1)).toBe(true);
  }, 30_000);

  it('with a real clock: another client’s AWB and webhook are on time while the silent receiver holds every attempt of its own', async () => {
    const box = await start('real');
    await createOrders(box, 2 * WEBHOOK_CONCURRENCY.perClient, {}, TOKEN_A);
    // Once A's attempts are all in flight and hanging, B creates an order.
    await until(() => silent.received.length >= WEBHOOK_CONCURRENCY.perClient, 5_000);
    const [orderB] = await createOrders(box, 1, {}, TOKEN_B);
    await until(() => healthy.received.length === 1, 5_000);
    const order = (await box.call('GET', `/__sandbox/orders/${orderB}`, { token: TOKEN_B })).body;
    const late = Date.parse(order.awb_generated_at) - Date.parse(order.awb_due_at);
    // On time: well within one attempt timeout of A's receiver (a busy machine adds its own delay).
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(TIMEOUT_MS / 2);
  }, 30_000);
});
