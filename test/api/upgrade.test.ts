import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/index.js';
import { defaultTestOptions, TOKEN_A } from '../support/sandbox.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ ...defaultTestOptions, port: 0 });
});
afterAll(() => sandbox.close());

/** Sends raw request bytes and resolves with everything the server wrote before it closed the connection. */
function rawBytes(text: string): Promise<Buffer> {
  const { port } = new URL(sandbox.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
  });
}

/** As rawBytes, the answer as text. */
const raw = async (text: string): Promise<string> => (await rawBytes(text)).toString('utf8');

const health = async () => (await fetch(`${sandbox.url}/__sandbox/health`)).status;

describe('requests that offer a connection upgrade', () => {
  it('answers one offering h2c as the plain request it is (curl --http2 does this), and closes the connection', async () => {
    const answer = await raw(`GET /__sandbox/webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN_A}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toMatch(/"url"/);
  });

  it('logs, journals and counts a request answered so, as any other (they were served unseen)', async () => {
    const counted = async () => Number(/sandbox_http_requests_total\{[^}]*operation="trackOrder"[^}]*status="404"[^}]*\} (\d+)/.exec(await (await fetch(`${sandbox.url}/__sandbox/metrics`)).text())?.[1] ?? 0);
    const before = await counted();
    const answer = await raw(`GET /v1/order/tracking/JNUPGRADE0001 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN_A}\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const journal = await (await fetch(`${sandbox.url}/__sandbox/requests`, { headers: { Authorization: `Bearer ${TOKEN_A}` } })).json();
    expect(journal.requests.map((r: { path: string; status: number }) => [r.path, r.status])).toContainEqual(['/v1/order/tracking/JNUPGRADE0001', 404]);
    expect(await counted()).toBe(before + 1);
  });

  it('answers a WebSocket upgrade of a path other than the listen one as a plain request (404 with the envelope)', async () => {
    const answer = await raw('GET /no/such/path HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).toMatch(/"success":false/);
  });

  it('sends a large answer whole to a request offering an upgrade (the docs page script, curl --http2 on http://)', async () => {
    const answer = await rawBytes('GET /docs/assets/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n');
    const end = answer.indexOf('\r\n\r\n');
    const head = answer.subarray(0, end).toString('latin1');
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
    expect(length).toBeGreaterThan(1_000_000);
    expect(answer.length - end - 4).toBe(length);
  });

  it('sends whole a large answer pipelined before a request offering an upgrade, then answers that request', async () => {
    const answer = await rawBytes('GET /docs/assets/swagger-ui-bundle.js HTTP/1.1\r\nHost: x\r\n\r\nGET /__sandbox/health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n');
    const end = answer.indexOf('\r\n\r\n');
    const length = Number(/content-length: (\d+)/i.exec(answer.subarray(0, end).toString('latin1'))?.[1]);
    expect(length).toBeGreaterThan(1_000_000);
    const second = answer.subarray(end + 4 + length).toString('latin1');
    expect(second).toMatch(/^HTTP\/1\.1 200 /);
    expect(second).toContain('"status":"ok"');
  });

  it('answers a request with a body and an Upgrade header 400 naming the header', async () => {
    const body = '{"items":[]}';
    const answer = await raw(`POST /v1/order HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN_A}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n${body}`);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"field":"header.upgrade"');
  });

  it('keeps serving when a client resets its connection right after an upgrade request, or sends a target no URL parser takes', async () => {
    for (let i = 0; i < 5; i += 1) {
      await new Promise<void>((resolve) => {
        const { port } = new URL(sandbox.url);
        const socket: Socket = connect(Number(port), '127.0.0.1', () => {
          socket.write('GET /x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
          setTimeout(() => {
            socket.resetAndDestroy();
            resolve();
          }, 1);
        });
        socket.on('error', () => resolve());
      });
    }
    const odd = await raw('GET http://[::1/x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    expect(odd).toMatch(/^HTTP\/1\.1 4\d\d /);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await health()).toBe(200);
  });
});
