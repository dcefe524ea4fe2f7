import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const TOKEN = 'happy-token';
const ORDER = JSON.parse(readFileSync(new URL('../../examples/order.json', import.meta.url), 'utf8')) as unknown;

/** The shares the README gives a happy-path client: with the webhook checks, and without them. */
function readmeShares(): { withChecks: number; without: number } {
  const found = /happy-path client (?:\([^)]*\) )?stops near (\d+) % once it runs the webhook checks \(about (\d+) % without them\)/.exec(README.replace(/\s+/g, ' '));
  if (!found) throw new Error('the README no longer gives a happy-path client its shares');
  return { withChecks: Number(found[1]), without: Number(found[2]) };
}

/**
 * A client that does what works and nothing more: it creates the README's example order,
 * acknowledges its webhooks once their signatures verify (as the webhooks guide says), reads
 * the order's tracking as time moves on until it is delivered (the 404 before the pick-up
 * scan among its reads), and meets no other error and no fault on purpose. Within 2 points
 * of the README's figures: one item more or less is 4.5.
 */
describe('a happy-path client, as the README grades it', () => {
  let sandbox: Sandbox;
  let receiver: Server;
  const share = async () => {
    const res = await fetch(`${sandbox.url}/__sandbox/report`, { headers: { authorization: `Bearer ${TOKEN}` } });
    return ((await res.json()) as { summary: { handled_percent: number } }).summary.handled_percent;
  };
  let without = 0;
  let withChecks = 0;

  beforeAll(async () => {
    sandbox = await createSandbox({ clock: 'manual', tokens: [TOKEN], data: ':memory:', logLevel: 'silent', seed: 'happy' });
    let secret = '';
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        try {
          new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
          res.writeHead(200).end();
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const call = (method: string, path: string, body?: unknown) => fetch(`${sandbox.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    expect((await call('PUT', '/__sandbox/webhook', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks` })).status).toBe(200);
    secret = ((await (await call('GET', '/__sandbox/webhook')).json()) as { secret: string }).secret;
    // The README's example order (two parcels), its AWB from the webhook's order, then tracking read as time moves on, to the end.
    const created = (await (await call('POST', '/v1/order', ORDER)).json()) as { order_numbers: string[] };
    expect(created.order_numbers).toHaveLength(2);
    await sandbox.clock.advance(60_000);
    const { awb } = (await (await call('GET', `/__sandbox/orders/${created.order_numbers[0]}`)).json()) as { awb: string };
    let read = await call('GET', `/v1/order/tracking/${awb}`);
    expect(read.status).toBe(404); // before the pick-up scan
    for (let hours = 0; hours < 96 && !JSON.stringify(await read.json()).includes('"DELIVERED"'); hours += 1) {
      await sandbox.clock.advance(3_600_000);
      read = await call('GET', `/v1/order/tracking/${awb}`);
    }
    without = await share();
    expect((await call('POST', '/__sandbox/checks')).status).toBe(200);
    withChecks = await share();
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  it('handles about the share the README says without the webhook checks', () => {
    expect(Math.abs(without - readmeShares().without)).toBeLessThanOrEqual(2);
  });

  it('handles about the share the README says once it runs them, and stays below the CI example\'s --fail-under 80', () => {
    expect(Math.abs(withChecks - readmeShares().withChecks)).toBeLessThanOrEqual(2);
    expect(withChecks).toBeLessThan(80);
  });
});
