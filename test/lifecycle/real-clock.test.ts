import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { specExample } from '../support/orders.js';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.close());

describe('a real clock with --speed', () => {
  it('completes a delivered journey within a few seconds of wall time', async () => {
    // 3 simulated days in about 1.3 s of wall time.
    sandbox = await createSandbox({ port: 0, clock: 'real', speed: 200_000, awbDelay: '1s', tokens: ['t'] });
    const headers = { authorization: 'Bearer t', 'content-type': 'application/json' };
    const created = await (await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(specExample()) })).json();
    const orderNo = created.order_numbers[0];
    const started = Date.now();
    let state: { status: string; awb: string } | undefined;
    while (Date.now() - started < 8_000) {
      state = await (await fetch(`${sandbox.url}/__sandbox/orders/${orderNo}`, { headers })).json();
      if (state!.status === 'delivered') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(state!.status).toBe('delivered');
    expect(Date.now() - started).toBeLessThan(8_000);
    const tracking = await (await fetch(`${sandbox.url}/v1/order/tracking/${state!.awb}`, { headers })).json();
    expect(tracking.last_status).toBe('2');
  });
});
