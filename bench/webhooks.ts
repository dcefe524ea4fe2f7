/**
 * How long 1,000 AWB webhooks take to reach a local receiver after one clock advance
 * makes them due. `npm run bench:webhooks [count]` prints the figure; bench/run.ts
 * and test/webhooks/volume.test.ts call `measureWebhooks`.
 */
import { pathToFileURL } from 'node:url';
import { createSandbox } from '../src/app/sandbox.js';
import { Receiver } from '../test/webhooks/receiver.js';
import { createRequest } from '../test/support/orders.js';

const TOKEN = 'bench-webhooks';
const AWB_DELAY_MS = 60_000;

/** What one run measured: webhooks delivered, distinct webhook-ids, and the advance's duration in ms. */
export interface WebhookFigure {
  count: number;
  received: number;
  distinct: number;
  ms: number;
}

/** Creates `count` orders, advances the manual clock once, and times until every webhook was delivered. */
export async function measureWebhooks(count: number): Promise<WebhookFigure> {
  const receiver = await Receiver.start();
  const sandbox = await createSandbox({ clock: 'manual', seed: 'bench', awbDelay: '1m', maxItems: 1000, tokens: [TOKEN], webhookUrl: receiver.url });
  try {
    for (let made = 0; made < count; made += 1000) {
      const res = await fetch(`${sandbox.url}/v1/order`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(createRequest(Math.min(1000, count - made))),
      });
      if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
    }
    const started = performance.now();
    await sandbox.clock.advance(AWB_DELAY_MS);
    const ms = Math.round(performance.now() - started);
    return { count, received: receiver.received.length, distinct: new Set(receiver.received.map((r) => r.id)).size, ms };
  } finally {
    await sandbox.close();
    await receiver.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const count = Number(process.argv[2] ?? 1000);
  const figure = await measureWebhooks(count);
  console.log(`${figure.received} of ${figure.count} AWB webhooks delivered (${figure.distinct} distinct webhook-ids) in ${figure.ms} ms after one clock advance.`);
  if (figure.received !== count || figure.distinct !== count) process.exitCode = 1;
}
