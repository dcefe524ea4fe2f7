import type net from 'node:net';
import { constants, createGzip } from 'node:zlib';
import { createRequest } from '../support/orders.js';
import { describe, expect, it } from 'vitest';
import { rawSandbox } from '../support/raw-sandbox.js';
import { TOKEN_A } from '../support/sandbox.js';

// A body the sandbox answers before reading it (no token, past the limit) goes on arriving
// after its answer: the sandbox reads it off the connection within bounds, so that the
// client still gets its answer, and a hostile client cannot make it read gigabytes or hold
// the connection.
const raw = rawSandbox();

const start = (): Promise<number> => raw.start({ clients: [{ token: TOKEN_A, id: 'client-a' }], bodyLimit: '1kb' });

const head = (headers: Record<string, string | undefined>): string =>
  `POST /v1/order HTTP/1.1\r\nHost: sandbox\r\nContent-Type: application/json\r\n${Object.entries(headers)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

/** What a socket received, and how it ended, once it closes. */
function ending(socket: net.Socket): Promise<{ answer: string; error: string | undefined; ms: number }> {
  const started = Date.now();
  let answer = '';
  let error: string | undefined;
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
  return new Promise((resolve) => socket.once('close', () => resolve({ answer, error, ms: Date.now() - started })));
}

describe('a body still arriving when it is answered', () => {
  it('past the limit in chunks, is answered 413 as it arrives, not once it ends (it may never)', async () => {
    const socket = await raw.connect(await start());
    socket.write(head({ Authorization: `Bearer ${TOKEN_A}`, 'Transfer-Encoding': 'chunked' }));
    const chunk = Buffer.alloc(4096, 0x20);
    socket.write(`${chunk.length.toString(16)}\r\n`);
    socket.write(chunk);
    socket.write('\r\n'); // no last chunk: the body goes on
    const answer = await new Promise<string>((resolve) => socket.once('data', (data: Buffer) => resolve(data.toString('latin1'))));
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain('"field":"body"');
  });

  it('declared past the limit, is answered 413 at its headers, without Expect: 100-continue too, before any of it comes', async () => {
    const socket = await raw.connect(await start());
    socket.write(head({ Authorization: `Bearer ${TOKEN_A}`, 'Content-Length': String(2_000_000_000) }));
    const answer = await new Promise<string>((resolve) => socket.once('data', (data: Buffer) => resolve(data.toString('latin1'))));
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
  });

  // A streaming compressor's flushes make the body as sent several times its decoded size: the limit counts the decoded bytes.
  it('compressed to more bytes than it decodes to, under the limit decoded, is read and answered as its fields are', async () => {
    const body = Buffer.from(JSON.stringify(createRequest(5)));
    const limit = (Math.ceil(body.length / 1024) + 1) * 1024;
    const gzip = createGzip();
    const parts: Buffer[] = [];
    gzip.on('data', (part: Buffer) => parts.push(part));
    for (let i = 0; i < body.length; i += 2) {
      gzip.write(body.subarray(i, i + 2));
      await new Promise<void>((resolve) => gzip.flush(constants.Z_SYNC_FLUSH, () => resolve()));
    }
    const ended = new Promise((resolve) => gzip.once('end', resolve));
    gzip.end();
    await ended;
    const sent = Buffer.concat(parts);
    const port = await raw.start({ clients: [{ token: TOKEN_A, id: 'client-a' }], bodyLimit: `${limit / 1024}kb` });
    expect(sent.length).toBeGreaterThan(1.5 * limit);
    const res = await fetch(`http://127.0.0.1:${port}/v1/order`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN_A}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: sent });
    expect(res.status).toBe(201);
  });

  // Python's http.client (urllib, requests' older adapters) asks `Connection: close` and reads the
  // answer only once it has sent the whole body: closing the connection at the answer reset it under them.
  it.each([
    ['without a token: 401', undefined, '401'],
    ['past the limit: 413', `Bearer ${TOKEN_A}`, '413'],
  ])('reaches a client that sends its whole body before it reads, on a connection it asked to close (%s)', async (_, authorization, status) => {
    const socket = await raw.connect(await start());
    socket.pause(); // nothing read until the body is sent, as http.client does
    const ended = ending(socket);
    socket.write(head({ Authorization: authorization, Connection: 'close', 'Content-Length': String(8_000_000) }));
    await new Promise<void>((resolve) => socket.write(Buffer.alloc(8_000_000, 0x20), () => resolve()));
    socket.resume();
    const { answer, error } = await ended;
    expect(error).toBeUndefined();
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  });

  it('declared as 2 GB after its 401, is read for a bounded time and number of bytes, then its connection closed', async () => {
    const socket = await raw.connect(await start());
    const ended = ending(socket);
    socket.write(head({ 'Content-Length': String(2_000_000_000) }));
    const chunk = Buffer.alloc(1 << 20, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (!socket.destroyed && sent < 2_000_000_000) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
    };
    pump();
    const { answer, ms } = await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    // 16 MiB kept for the next request, then 112 MiB lingering half-closed, give or take what came between two looks and the buffers.
    expect(sent).toBeLessThan(400_000_000);
    expect(ms).toBeLessThan(20_000);
  }, 30_000);

  it('held back after its 401 on a connection half-closed, is closed once nothing came for a second', async () => {
    const socket = await raw.connect(await start());
    const ended = ending(socket);
    socket.write(head({ Connection: 'close', 'Content-Length': String(100_000) }));
    socket.write('{');
    const { answer, ms } = await ended;
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(ms).toBeLessThan(4_000);
  });

  it('sent whole with its 401 keeps the connection for the next request', async () => {
    const socket = await raw.connect(await start());
    let answers = '';
    socket.on('data', (chunk: Buffer) => (answers += chunk.toString('latin1')));
    socket.write(head({ 'Content-Length': String(3_000_000) }));
    socket.write(Buffer.alloc(3_000_000, 0x20));
    await expect.poll(() => answers.match(/HTTP\/1\.1 401 /g)?.length ?? 0).toBe(1);
    socket.write(`GET /__sandbox/health HTTP/1.1\r\nHost: sandbox\r\n\r\n`);
    await expect.poll(() => answers).toMatch(/HTTP\/1\.1 200 /);
  });
});
