// The manual's "In-process use" example (docs/guides/ci-and-readiness.md), run as it stands
// (only the import path differs: users write `from 'shipping-sandbox'`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';

const TOKEN = 'test-token';
let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ clock: 'manual', tokens: [TOKEN], seed: 'example', awbDelay: '5s' });
});
afterAll(() => sandbox.close());

/** Calls the sandbox as our client would. */
async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${sandbox.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('my shipping client against the sandbox', () => {
  it('gets an AWB once the AWB delay has passed on the sandbox clock', async () => {
    const spec = await (await fetch(`${sandbox.url}/__sandbox/openapi.json`)).json();
    const example = spec.paths['/v1/order'].post.requestBody.content['application/json'].examples.twoParcels.value;

    const created = await api('POST', '/v1/order', example);
    expect(created.status).toBe(201);
    const orderNo = created.body.order_numbers[0];
    expect((await api('GET', `/__sandbox/orders/${orderNo}`)).body.awb).toBeNull();

    await sandbox.clock.advance(5_000);
    const state = await api('GET', `/__sandbox/orders/${orderNo}`);
    expect(state.body.awb).toMatch(/^[A-Z0-9-]+$/);
  });

  it('tracks a magic AWB without creating anything', async () => {
    const tracking = await api('GET', '/v1/order/tracking/SBXDLV00000001');
    expect(tracking.status).toBe(200);
    expect(tracking.body.last_status).toBe('2');
  });

  it('listens on a free local port with the manual clock', () => {
    expect(sandbox.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sandbox.clock.mode).toBe('manual');
  });
});
