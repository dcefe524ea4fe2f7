import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { createRequest } from '../support/orders.js';

let server: Sandbox;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
beforeAll(async () => {
  server = await createSandbox({ clock: 'manual', tokens: ['token-a', 'token-b'] });
});
afterAll(async () => {
  agent.destroy();
  await server.close();
});

/** One request through the agent's single keep-alive connection: its status, JSON body and whether it reused the connection. */
function send(method: string, path: string, token: string | undefined, body?: unknown): Promise<{ status: number; body: any; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const req = request(`${server.url}${path}`, { method, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('tokens on one keep-alive connection', () => {
  it('takes each request for the token it sends: a create, a bad token, another client, the first again', async () => {
    const created = await send('POST', '/v1/order', 'token-a', createRequest(1));
    expect(created.status).toBe(201);
    const orderNo = created.body.order_numbers[0] as string;

    const unknown = await send('GET', '/__sandbox/orders', 'token-c');
    const missing = await send('GET', '/__sandbox/orders', undefined);
    const other = await send('GET', `/__sandbox/orders/${orderNo}`, 'token-b');
    const own = await send('GET', `/__sandbox/orders/${orderNo}`, 'token-a');

    expect([unknown.status, missing.status, other.status, own.status]).toEqual([401, 401, 404, 200]);
    expect(unknown.body.errors).toEqual([{ field: 'header.authorization', message: 'unknown token' }]);
    expect(own.body.order_no).toBe(orderNo);
    // All on the one connection the first request opened.
    expect([unknown.reused, missing.reused, other.reused, own.reused]).toEqual([true, true, true, true]);
  });
});
