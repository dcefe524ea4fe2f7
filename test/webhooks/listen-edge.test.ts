import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import type { SandboxOptions } from '../../src/config/options.js';
import { isRefused, TestListener } from '../support/listener.js';
import { databaseFor, onPostgres, releaseDatabase } from '../support/store-kind.js';
import { TOKEN_A } from '../support/sandbox.js';

let sandbox: Sandbox | undefined;
let database: string | undefined;
const sessions: TestListener[] = [];

async function start(options: SandboxOptions = {}): Promise<Sandbox> {
  database = onPostgres ? (await databaseFor(undefined)).url : undefined;
  sandbox = await createSandbox({
    host: '127.0.0.1',
    port: 0,
    clock: 'manual',
    seed: 'listen-edge',
    logLevel: 'silent',
    clients: [{ token: TOKEN_A, id: 'client-a' }],
    ...(database ? { databaseUrl: database } : {}),
    ...options,
  });
  return sandbox;
}

afterEach(async () => {
  for (const s of sessions.splice(0)) if (s.closeCode === undefined) await s.close();
  await sandbox?.close();
  sandbox = undefined;
  if (database) await releaseDatabase(database);
});

/** Sends `head` as it is on a fresh connection and returns the whole answer (the server closes it). */
function raw(head: string): Promise<{ status: number; headers: string; body: any }> {
  const { port } = new URL(sandbox!.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(head));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [headers = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(headers)?.[1]), headers, body: body ? JSON.parse(body) : undefined });
    });
  });
}

const upgradeHeaders = (extra = ''): string =>
  `Host: 127.0.0.1\r\nAuthorization: Bearer ${TOKEN_A}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`;

const endpoints = async (): Promise<Array<{ listener: string | null }>> =>
  (await (await fetch(`${sandbox!.url}/__sandbox/webhooks/endpoints`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).json()).endpoints;

describe('GET /__sandbox/listen: the edge of the upgrade', () => {
  it('a request target that is no URL answers 400 with the envelope, and the sandbox keeps serving', async () => {
    await start();
    const answer = await raw(`GET http://[::1/x HTTP/1.1\r\n${upgradeHeaders('Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n')}`);
    expect(answer.status).toBe(400);
    expect(answer.body.success).toBe(false);
    expect(answer.body.errors[0].field).toBe('url');
    const health = await fetch(`${sandbox!.url}/__sandbox/health`);
    expect(health.status).toBeLessThan(500);
  });

  it('a request without Sec-WebSocket-Key is a 400 naming the header and creates no endpoint', async () => {
    await start();
    const answer = await raw(`GET /__sandbox/listen?name=laptop HTTP/1.1\r\n${upgradeHeaders()}`);
    expect(answer.status).toBe(400);
    expect(answer.body.errors[0].field).toBe('header.sec-websocket-key');
    expect((await endpoints()).filter((e) => e.listener !== null)).toHaveLength(0);
  });

  it('--rate-limit counts listen requests: past it a 429 envelope with Retry-After, and no endpoint written', async () => {
    await start({ rateLimit: 1 });
    const first = await TestListener.open(sandbox!.url, { token: TOKEN_A, name: 'first' });
    expect(isRefused(first)).toBe(false);
    if (!isRefused(first)) sessions.push(first);
    const answer = await raw(`GET /__sandbox/listen?name=second HTTP/1.1\r\n${upgradeHeaders('Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n')}`);
    expect(answer.status).toBe(429);
    expect(answer.headers).toMatch(/\r\nRetry-After: \d+/i);
    expect(answer.body.success).toBe(false);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await endpoints()).filter((e) => e.listener !== null).map((e) => e.listener)).toEqual(['first']);
  });

  it('--rate-limit is one budget per client for its API requests and its listen openings', async () => {
    await start({ rateLimit: 2 });
    for (let i = 0; i < 2; i += 1) expect((await fetch(`${sandbox!.url}/__sandbox/webhook`, { headers: { authorization: `Bearer ${TOKEN_A}` } })).status).toBe(200);
    const answer = await raw(`GET /__sandbox/listen?name=after-api HTTP/1.1\r\n${upgradeHeaders('Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n')}`);
    expect(answer.status).toBe(429);
  });

  it('a stop is not held by a listener that never answers the close (1001): its connection is dropped after a moment', async () => {
    await start();
    const session = await TestListener.open(sandbox!.url, { token: TOKEN_A, name: 'half-open' });
    if (isRefused(session)) throw new Error('listen refused');
    // The peer stops reading: it never sees the close frame, so it never answers it.
    (session.ws as any)._socket.pause();
    const began = Date.now();
    await sandbox!.close();
    sandbox = undefined;
    expect(Date.now() - began).toBeLessThan(5_000);
    (session.ws as any)._socket.resume();
    await session.closed;
  }, 40_000);

  it('a session closed with 1008 that goes on sending is read no further and ended after a moment, not held for ws\'s 30 s close timeout', async () => {
    await start();
    const { port } = new URL(sandbox!.url);
    const socket = connect(Number(port), '127.0.0.1');
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    const ended = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    // The sandbox ends the session by terminating its socket: the flood's next write may meet a reset (ECONNRESET), then 'close' follows.
    socket.on('error', () => undefined);
    socket.write(`GET /__sandbox/listen?name=garbler HTTP/1.1\r\n${upgradeHeaders('Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n')}`);
    await expect.poll(() => received.toString('latin1'), { timeout: 10_000 }).toContain('"type":"ready"');
    // A masked text frame of a peer that never answers the close and keeps sending.
    const frame = (text: string) => {
      const payload = Buffer.from(text);
      const mask = Buffer.from([1, 2, 3, 4]);
      return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, payload.map((b, i) => b ^ mask[i % 4]!)]);
    };
    socket.write(frame('not json'));
    const closedAt = Date.now();
    const flood = setInterval(() => socket.writable && socket.write(frame('{"type":"result"}')), 20);
    try {
      expect((await ended) - closedAt).toBeLessThan(5_000);
    } finally {
      clearInterval(flood);
      socket.destroy();
    }
    // The close frame it was sent: opcode 8, code 1008 and its reason.
    const close = received.indexOf(Buffer.from([0x88]));
    expect(close).toBeGreaterThan(0);
    expect(received.readUInt16BE(close + 2)).toBe(1008);
    expect(received.subarray(close + 4).toString('utf8')).toContain('malformed message');
  }, 40_000);
});
