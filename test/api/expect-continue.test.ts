import { expect, it } from 'vitest';
import { createRequest } from '../support/orders.js';
import { rawSandbox } from '../support/raw-sandbox.js';
import { TOKEN_A } from '../support/sandbox.js';

// A client that sends `Expect: 100-continue` (curl does for large bodies) waits for `100 Continue` before its body.

const raw = rawSandbox();
const start = (): Promise<number> => raw.start({ tokens: [TOKEN_A] });

/** A connection that has sent a create's headers asking to continue, and what came back on it so far. */
async function asking(port: number, headers: string, body: string) {
  const socket = await raw.connect(port);
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('close', () => (closed = true));
  socket.write(`POST /v1/order HTTP/1.1\r\nHost: sandbox\r\n${headers}Expect: 100-continue\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
  const until = async (done: () => boolean): Promise<string> => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return received;
  };
  return { socket, until, received: () => received, closed: () => closed };
}

const body = JSON.stringify(createRequest(1));

it('tells a create that authenticates to send its body, and answers it once sent', async () => {
  const port = await start();
  const client = await asking(port, `Authorization: Bearer ${TOKEN_A}\r\nContent-Type: application/json\r\n`, body);
  expect(await client.until(() => client.received().includes('\r\n\r\n'))).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\n$/);
  client.socket.write(body);
  expect(await client.until(() => /"success":true/.test(client.received()))).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 [^]*"success":true/);
});

it('refuses a create without a token that authenticates before inviting its body, and closes the connection', async () => {
  const port = await start();
  const client = await asking(port, `Authorization: Bearer not-a-token\r\nContent-Type: application/json\r\n`, body);
  await client.until(() => client.closed());
  expect(client.received()).toMatch(/^HTTP\/1\.1 401 /);
  expect(client.received()).not.toContain('100 Continue');
  expect(client.received()).toMatch(/\r\nConnection: close\r\n/i);
  expect(client.closed()).toBe(true);
});

it('refuses a body of a type it never reads before inviting it', async () => {
  const port = await start();
  const client = await asking(port, `Authorization: Bearer ${TOKEN_A}\r\nContent-Type: text/plain\r\n`, 'hello');
  await client.until(() => client.closed());
  expect(client.received()).toMatch(/^HTTP\/1\.1 415 /);
  expect(client.received()).not.toContain('100 Continue');
  expect(client.closed()).toBe(true);
});

it('refuses a body declared larger than the body limit before inviting it', async () => {
  const port = await start();
  const client = await asking(port, `Authorization: Bearer ${TOKEN_A}\r\nContent-Type: application/json\r\n`, 'x'.repeat(2 * 1024 * 1024));
  await client.until(() => client.closed());
  expect(client.received()).toMatch(/^HTTP\/1\.1 413 [^]*"must be at most 1mb"/);
  expect(client.received()).not.toContain('100 Continue');
  expect(client.closed()).toBe(true);
});

it('refuses a body in a charset other than UTF-8 before inviting it', async () => {
  const port = await start();
  const client = await asking(port, `Authorization: Bearer ${TOKEN_A}\r\nContent-Type: application/json; charset=utf-16\r\n`, body);
  await client.until(() => client.closed());
  expect(client.received()).toMatch(/^HTTP\/1\.1 415 [^]*charset must be utf-8/);
  expect(client.received()).not.toContain('100 Continue');
});

it('keeps the connection of a request without a body that asks to continue, as Node does', async () => {
  const port = await start();
  const socket = await raw.connect(port);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  // Without a length, then with `Content-Length: 0` (which body-parser reads, though there is nothing to invite).
  const request = (length: string) => `POST /__sandbox/reset HTTP/1.1\r\nHost: sandbox\r\nAuthorization: Bearer ${TOKEN_A}\r\n${length}Expect: 100-continue\r\n\r\n`;
  socket.write(request(''));
  for (let i = 0; i < 200 && !/HTTP\/1\.1 [2-5]\d\d [^]*\r\n\r\n[^]*\}/.test(received); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  socket.write(request('Content-Length: 0\r\n'));
  for (let i = 0; i < 200 && (received.match(/HTTP\/1\.1 [2-5]\d\d /g) ?? []).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(received.match(/HTTP\/1\.1 [2-5]\d\d /g)).toEqual(['HTTP/1.1 200 ', 'HTTP/1.1 200 ']);
  expect(received).not.toMatch(/Connection: close/i);
});
