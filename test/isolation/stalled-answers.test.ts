import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import net from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { openConnections } from '../../src/app/connections.js';
import { answerWithoutUpgrade } from '../../src/app/upgrade.js';
import { noteServed } from '../../src/http/response-notes.js';
import { streamAnswer } from '../support/streamed.js';

// A client that asks for answers and never reads them: each answer waits in the server's memory.
const STALLED_MS = 1_500;

let server: Server | undefined;
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A server whose `/big` answers 32 MB, `/small` a few bytes and `/held` nothing yet, and the warnings it logged. */
async function serve(): Promise<{ port: number; warnings: Array<[object, string]>; open: Set<net.Socket> }> {
  const warnings: Array<[object, string]> = [];
  server = createServer((req, res) => {
    if (req.url === '/held') return;
    noteServed(res as never, 'listOrders', 'client-a');
    res.end(req.url?.startsWith('/big') ? Buffer.alloc(32 * 1024 * 1024, 'x') : 'ok');
  });
  const open = openConnections(server, { warn: (fields: object, message: string) => void warnings.push([fields, message]) } as never, STALLED_MS);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { port: (server!.address() as net.AddressInfo).port, warnings, open };
}

/** A connection that asks for `path` and reads `perTick` bytes every 50 ms (0: never; a paused socket does not see its close). */
async function asking(port: number, path: string, perTick = 0): Promise<void> {
  const socket = net.connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.pause();
  socket.write(`GET ${path} HTTP/1.1\r\nHost: sandbox\r\n\r\n`);
  if (perTick === 0) return;
  const reading = setInterval(() => socket.read(Math.min(perTick, socket.readableLength || perTick)), 50);
  socket.once('close', () => clearInterval(reading));
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('closes a connection whose client reads nothing of a large answer for a while, and says so', async () => {
  const { port, warnings, open } = await serve();
  await asking(port, '/big?page=2');
  await wait(STALLED_MS * 3);
  expect(open.size).toBe(0);
  expect(warnings).toEqual([[expect.objectContaining({ path: '/big', client: 'client-a', waiting_bytes: expect.any(Number) }), expect.stringContaining('took nothing of its answer')]]);
});

it('leaves alone a slow reader, a request still waiting for its answer, and a connection kept alive after its answer', async () => {
  const { port, warnings, open } = await serve();
  await asking(port, '/big', 256 * 1024);
  await asking(port, '/held');
  await asking(port, '/small', 1024);
  await wait(STALLED_MS * 3);
  expect(warnings).toEqual([]);
  expect(open.size).toBe(3);
  expect(warnings).toEqual([]);
});

it('closes so a connection whose request offered an upgrade (answered as the plain request it is) and whose client reads nothing of a streamed answer', async () => {
  const warnings: Array<[object, string]> = [];
  // Streamed in pieces, as a listing page or a file is: each piece waits for the socket to drain.
  const handle = (_req: IncomingMessage, res: ServerResponse): void => {
    noteServed(res as never, 'listOrders', 'client-a');
    streamAnswer(res, 32 * 1024 * 1024);
  };
  server = createServer(handle);
  server.on('upgrade', (req: IncomingMessage, socket: net.Socket) => answerWithoutUpgrade(req, socket, handle));
  const open = openConnections(server, { warn: (fields: object, message: string) => void warnings.push([fields, message]) } as never, STALLED_MS);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => undefined);
  socket.pause();
  socket.write('GET /orders HTTP/1.1\r\nHost: sandbox\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
  await wait(STALLED_MS * 4);
  expect(open.size).toBe(0);
  expect(warnings).toEqual([[expect.objectContaining({ path: '/orders', client: 'client-a' }), expect.stringContaining('took nothing of its answer')]]);
});
