import { createRequest } from '../support/orders.js';
import { Receiver } from './receiver.js';
import { testSandbox, TOKEN_A, TOKEN_B, type TestSandbox } from '../support/sandbox.js';
import type { SandboxOptions } from '../../src/config/options.js';
import type { deliveryView } from '../../src/webhooks/views.js';

/** A delivery as the control API shows it. */
export type DeliveryView = ReturnType<typeof deliveryView>;

/** A test sandbox whose client A sends its webhooks to `url` (client B has none). AWB delay 1 minute. */
export function webhookSandbox(url: string, options: SandboxOptions = {}): Promise<TestSandbox> {
  return testSandbox({
    clients: [
      { token: TOKEN_A, id: 'client-a', webhook: { url } },
      { token: TOKEN_B, id: 'client-b' },
    ],
    ...options,
  });
}

/** A webhook receiver on 127.0.0.1 and a sandbox whose client A sends to it; stop both with `stopWebhookSandbox`. */
export async function startWebhookSandbox(options: SandboxOptions = {}): Promise<{ receiver: Receiver; sandbox: TestSandbox }> {
  const receiver = await Receiver.start();
  return { receiver, sandbox: await webhookSandbox(receiver.url, options) };
}

export async function stopWebhookSandbox(sandbox: TestSandbox, receiver: Receiver): Promise<void> {
  await sandbox.close();
  await receiver.close();
}

/** Creates `count` orders for client A (or `token`) and returns their numbers. */
export async function createOrders(sandbox: TestSandbox, count = 1, headers: Record<string, string> = {}, token = TOKEN_A): Promise<string[]> {
  const res = await sandbox.call('POST', '/v1/order', { body: createRequest(count), headers, token });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.order_numbers as string[];
}

/** The delivery log of client A (or `token`), oldest first. */
export async function deliveries(sandbox: TestSandbox, query = '', token = TOKEN_A): Promise<DeliveryView[]> {
  const res = await sandbox.call('GET', `/__sandbox/webhooks/deliveries?limit=1000${query}`, { token });
  if (res.status !== 200) throw new Error(`list failed: ${res.status} ${JSON.stringify(res.body)}`);
  return [...(res.body.deliveries as DeliveryView[])].reverse();
}
