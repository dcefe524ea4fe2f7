import net from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { MAX_BODIES_READING } from '../../src/http/edge.js';
import { createRequest } from '../support/orders.js';
import { TOKEN_A, TOKEN_B } from '../support/sandbox.js';
import { databaseFor, onPostgres, releaseDatabase } from '../support/store-kind.js';

let sandbox: Sandbox | undefined;
let database: string | undefined;
const sockets: net.Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await sandbox?.close();
  if (database) await releaseDatabase(database);
});

/** A create of `token` whose headers and first byte of body are sent, and the rest never. */
async function heldBody(port: number, token: string): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`POST /v1/order HTTP/1.1\r\nHost: sandbox\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`);
  return socket;
}

const create = (token: string) =>
  fetch(`${sandbox!.url}/v1/order`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(createRequest(1)) });

it("refuses a client's request body past the bodies it is already sending at once, unread, with a 429 that closes its connection, and serves other clients meanwhile", async () => {
  database = onPostgres ? (await databaseFor(undefined)).url : undefined;
  sandbox = await createSandbox({ host: '127.0.0.1', port: 0, clock: 'manual', logLevel: 'silent', clients: [{ token: TOKEN_A, id: 'client-a' }, { token: TOKEN_B, id: 'client-b' }], ...(database ? { databaseUrl: database } : {}) });
  const port = Number(new URL(sandbox.url).port);
  const held = await Promise.all(Array.from({ length: MAX_BODIES_READING }, () => heldBody(port, TOKEN_A)));
  // Each held body has been read as far as it came, so it counts.
  await new Promise((resolve) => setTimeout(resolve, 200));

  const refused = await create(TOKEN_A);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBe('1');
  expect(refused.headers.get('connection')).toBe('close');
  const body = await refused.json();
  expect(body).toMatchObject({ success: false, message: expect.stringContaining(`as many request bodies at once as the sandbox reads for one client (${MAX_BODIES_READING}`) });

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
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect((await create(TOKEN_A)).status).toBe(201);

  // The refusal is in the client's request journal, as a 429 of createOrder.
  const journal = await fetch(`${sandbox.url}/__sandbox/requests?operation_id=createOrder`, { headers: { authorization: `Bearer ${TOKEN_A}` } }).then((r) => r.json() as Promise<{ requests: Array<{ status: number }> }>);
  expect(journal.requests.map((e) => e.status).sort()).toEqual([201, 429, 429]);
});
