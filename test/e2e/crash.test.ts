import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { tempDir } from '../support/tmp.js';

const headers = { authorization: 'Bearer crash', 'content-type': 'application/json' };

describe('a crash under create load', () => {
  const dir = tempDir();

  it('loses no order that was answered 201 (SIGKILL, then restart on the same data)', async () => {
    const data = join(dir(), 'sandbox.json');
    const args = ['--port', '0', '--data', data, '--token', 'crash', '--clock', 'manual', '--log-level', 'silent'];
    const first = await startCli(args);
    const acknowledged: string[] = [];
    let stop = false;
    let requests = 0;
    const worker = async () => {
      while (!stop) {
        requests += 1;
        try {
          const res = await fetch(`${first.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(2)) });
          if (res.status === 201) acknowledged.push(...((await res.json()) as { order_numbers: string[] }).order_numbers);
        } catch {
          return; // the server died mid-request: that order was never acknowledged
        }
      }
    };
    const workers = Array.from({ length: 10 }, worker);
    // Killed under load: once 100 orders were acknowledged (or after 20 s on a slow machine), with requests in flight.
    for (const began = Date.now(); acknowledged.length < 100 && Date.now() - began < 20_000; ) await new Promise((r) => setTimeout(r, 20));
    await first.stop('SIGKILL');
    stop = true;
    await Promise.all(workers);
    expect(acknowledged.length).toBeGreaterThan(50);

    const second = await startCli(args);
    const listed = await fetch(`${second.url}/__sandbox/orders?limit=1000`, { headers });
    const { total } = (await listed.json()) as { total: number };
    const missing: string[] = [];
    for (const orderNo of acknowledged) {
      const res = await fetch(`${second.url}/__sandbox/orders/${orderNo}`, { headers });
      if (res.status !== 200) missing.push(orderNo);
    }
    console.log(`crash test: ${requests} requests, ${acknowledged.length} orders acknowledged, ${total} stored after restart, ${missing.length} lost`);
    expect(missing).toEqual([]);
    expect(total).toBeGreaterThanOrEqual(acknowledged.length);
    expect(await second.stop()).toBe(0);
  });
});
