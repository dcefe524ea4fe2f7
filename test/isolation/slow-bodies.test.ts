import type net from 'node:net';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { MAX_BODIES_READING } from '../../src/http/bodies-reading.js';
import { createRequest } from '../support/orders.js';
import { rawSandbox } from '../support/raw-sandbox.js';
import { TOKEN_A, TOKEN_B } from '../support/sandbox.js';

const raw = rawSandbox();

const READER = 'token-client-a-reader';

const start = (): Promise<number> =>
  raw.start({ clients: [{ token: TOKEN_A, id: 'client-a' }, { token: READER, id: 'client-a', role: 'read_only' }, { token: TOKEN_B, id: 'client-b' }] });

/** A create of `token` whose headers and first bytes of body are sent, and the rest never (gzip: all but its last 8 bytes). */
async function heldBody(port: number, token: string, { gzip = false } = {}): Promise<net.Socket> {
  const socket = await raw.connect(port);
  const body = gzip ? gzipSync(JSON.stringify(createRequest(1))) : Buffer.from('{');
  const length = gzip ? body.length : 100_000;
  socket.write(`POST /v1/order HTTP/1.1\r\nHost: sandbox\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${gzip ? 'Content-Encoding: gzip\r\n' : ''}Content-Length: ${length}\r\n\r\n`);
  socket.write(gzip ? body.subarray(0, body.length - 8) : body);
  return socket;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
const reportItems = async (): Promise<unknown> => (await fetch(`${raw.sandbox.url}/__sandbox/report`, { headers: { authorization: `Bearer ${TOKEN_A}` } }).then((r) => r.json() as Promise<{ items: unknown }>)).items;

const create = (token: string) =>
  fetch(`${raw.sandbox.url}/v1/order`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(createRequest(1)) });

it("refuses a token's request body past the bodies it is already sending at once, unread, with a 429 that closes its connection, and serves other clients meanwhile", async () => {
  const port = await start();
  const held = await Promise.all(Array.from({ length: MAX_BODIES_READING }, () => heldBody(port, TOKEN_A)));
  // Each held body has been read as far as it came, so it counts.
  await settle();
  const judged = await reportItems();

  const refused = await create(TOKEN_A);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(refused.headers.get('connection')).toBe('close');
  const body = await refused.json();
  expect(body).toMatchObject({ success: false, message: expect.stringContaining(`as many request bodies at once as the sandbox reads for one token (${MAX_BODIES_READING}`) });
  // The sandbox's own protection, of a body it never read: nothing the readiness report grades.
  expect(await reportItems()).toEqual(judged);

  // One more held body is answered at once, and its connection closed: the rest of it holds no socket.
  const extra = await heldBody(port, TOKEN_A);
  let answer = '';
  extra.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  await new Promise((resolve) => extra.once('close', resolve));
  expect(answer).toMatch(/^HTTP\/1\.1 429 /);

  // Another client's create is read and served.
  expect((await create(TOKEN_B)).status).toBe(201);

  // One held body given up: client A may send one again.
  held[0]!.destroy();
  await settle();
  expect((await create(TOKEN_A)).status).toBe(201);

  // The refusal is in the client's request journal, as a 429 of createOrder.
  const journal = await fetch(`${raw.sandbox.url}/__sandbox/requests?operation_id=createOrder`, { headers: { authorization: `Bearer ${TOKEN_A}` } }).then((r) => r.json() as Promise<{ requests: Array<{ status: number }> }>);
  expect(journal.requests.map((e) => e.status).sort()).toEqual([201, 429, 429]);
});

it('counts a compressed body cut off before its end as ended: its token may send again', async () => {
  const port = await start();
  const held = await Promise.all(Array.from({ length: MAX_BODIES_READING }, () => heldBody(port, TOKEN_A, { gzip: true })));
  await settle();
  expect((await create(TOKEN_A)).status).toBe(429);
  for (const socket of held) socket.destroy();
  await settle();
  expect((await create(TOKEN_A)).status).toBe(201);
});

it("counts each token's bodies apart: a read_only token's held bodies do not refuse its client's partner token", async () => {
  const port = await start();
  await Promise.all(Array.from({ length: MAX_BODIES_READING }, () => heldBody(port, READER)));
  await settle();
  expect((await create(TOKEN_A)).status).toBe(201);
});
