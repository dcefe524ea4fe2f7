import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, expect, it, onTestFinished, vi } from 'vitest';
import { streamAnswer } from '../support/streamed.js';
import { drainConnections, noteUpgraded, openConnections } from '../../src/app/connections.js';
import { answerWithoutUpgrade } from '../../src/app/upgrade.js';

const BIG = 10 * 1024 * 1024;

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server?.listening ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A server whose `/big` answers 10 MB and `/small` a few bytes; `ended` resolves once the big answer's end was called. */
async function serve(): Promise<{ url: string; open: Set<Socket>; ended: Promise<void> }> {
  let bigEnded!: () => void;
  const ended = new Promise<void>((resolve) => (bigEnded = resolve));
  server = createServer((req, res) => {
    if (req.url !== '/big') return void res.end('ok');
    res.setHeader('Content-Length', BIG);
    res.end(Buffer.alloc(BIG, 'x'));
    bigEnded();
  });
  const open = openConnections(server);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, open, ended };
}

/** Asks for `url` and reads its answer slowly (a pause after each chunk); the bytes it got, or the error that cut it. */
function readSlowly(url: string): Promise<{ bytes: number; error?: string }> {
  return new Promise((resolve) => {
    let bytes = 0;
    get(url, (res: IncomingMessage) => {
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        res.pause();
        setTimeout(() => res.resume(), 5);
      });
      res.on('end', () => resolve({ bytes }));
      res.on('error', (error: NodeJS.ErrnoException) => resolve({ bytes, error: error.code ?? error.message }));
    }).on('error', (error: NodeJS.ErrnoException) => resolve({ bytes, error: error.code ?? error.message }));
  });
}

it('lets a large answer whose end was called reach a slow reader whole before its connection closes', async () => {
  const { url, open, ended } = await serve();
  const reading = readSlowly(`${url}/big`);
  await ended;
  const drained = drainConnections(server!, open);
  expect(await reading).toEqual({ bytes: BIG });
  await drained;
  await vi.waitFor(() => expect(open.size).toBe(0));
});

it('closes a connection kept alive after its answer without waiting for its keep-alive to lapse', async () => {
  const { url, open } = await serve();
  const first = await fetch(`${url}/small`);
  expect(await first.text()).toBe('ok');
  expect(open.size).toBe(1);
  const started = performance.now();
  await drainConnections(server!, open);
  // Node keeps such a connection 5 s; the drain closes it at once.
  expect(performance.now() - started).toBeLessThan(2_000);
  await vi.waitFor(() => expect(open.size).toBe(0));
});

it('closes a connection whose client takes nothing once the grace is over', async () => {
  const { url, open, ended } = await serve();
  // Its client reads nothing: the answer waits in the kernel's buffers and the server's.
  const request = get(`${url}/big`, (res) => res.pause()).on('error', () => undefined);
  onTestFinished(() => void request.destroy());
  await ended;
  const started = performance.now();
  await drainConnections(server!, open, 500);
  expect(performance.now() - started).toBeGreaterThanOrEqual(450);
  await vi.waitFor(() => expect(open.size).toBe(0));
});

/** A raw connection that asks for `path` (HTTP/1.1, kept alive); `reading` false leaves the answer unread. */
async function rawAsk(url: string, path: string, reading: boolean): Promise<{ socket: Socket; answered: Promise<void>; closed: Promise<void> }> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  onTestFinished(() => void socket.destroy());
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise((resolve) => socket.once('connect', resolve));
  let text = '';
  const answered = new Promise<void>((resolve) => {
    if (!reading) return resolve();
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.endsWith('\r\n\r\nok')) resolve();
    });
  });
  if (!reading) socket.pause();
  socket.write(`GET ${path} HTTP/1.1\r\nHost: sandbox\r\n\r\n`);
  return { socket, answered, closed };
}

it('closes a connection kept alive after its answer at once while another client takes nothing of a large answer', async () => {
  const { url, open, ended } = await serve();
  const stalled = await rawAsk(url, '/big', false);
  await ended;
  const kept = await rawAsk(url, '/small', true);
  await kept.answered;
  const started = performance.now();
  const drained = drainConnections(server!, open, 3_000);
  await kept.closed;
  // Closed by the sweep, not held until the grace ends with the stalled one.
  expect(performance.now() - started).toBeLessThan(2_000);
  expect(stalled.socket.destroyed).toBe(false);
  await drained;
});

/**
 * A server as the sandbox's: a request offering an upgrade comes to its 'upgrade' listener,
 * which answers `/big` (10 MB, streamed) as the plain request it is, and takes `/taken` as a
 * module takes a listen session (noted, then left open).
 */
async function serveUpgrades(): Promise<{ url: string; open: Set<Socket>; taken: Promise<void> }> {
  let noted!: () => void;
  const taken = new Promise<void>((resolve) => (noted = resolve));
  const handle = (_req: IncomingMessage, res: ServerResponse): void => {
    res.setHeader('Content-Length', BIG);
    streamAnswer(res, BIG);
  };
  server = createServer(handle);
  const open = openConnections(server);
  server.on('upgrade', (req: IncomingMessage, socket: Socket) => {
    if (req.url !== '/taken') return answerWithoutUpgrade(req, socket, handle);
    noteUpgraded(socket);
    socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    noted();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, open, taken };
}

/** A raw request of `path` offering a WebSocket upgrade; `reading` false leaves the answer unread. Resolves with the bytes read once the connection closes. */
function askWithUpgrade(url: string, path: string, reading: boolean): { socket: Socket; bytes: Promise<number> } {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  onTestFinished(() => void socket.destroy());
  socket.on('error', () => undefined);
  let bytes = 0;
  if (reading) socket.on('data', (chunk: Buffer) => void (bytes += chunk.length));
  else socket.pause();
  socket.write(`GET ${path} HTTP/1.1\r\nHost: sandbox\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`);
  return { socket, bytes: new Promise((resolve) => socket.once('close', () => resolve(bytes))) };
}

it('sends a streamed answer to a request offering an upgrade whole, past what the socket takes at once', async () => {
  const { url } = await serveUpgrades();
  const { bytes } = askWithUpgrade(url, '/big', true);
  expect(await bytes).toBeGreaterThan(BIG);
});

it('closes, at the grace, a connection answered as a plain request whose client takes nothing, and leaves a taken one to its taker', async () => {
  const { url, open, taken: tookIt } = await serveUpgrades();
  const stalled = askWithUpgrade(url, '/big', false);
  const taken = askWithUpgrade(url, '/taken', true);
  await tookIt;
  await vi.waitFor(() => expect(open.size).toBe(2));
  const started = performance.now();
  const drained = drainConnections(server!, open, 500);
  // The stalled one is closed at the grace; the taken one stays open.
  await vi.waitFor(() => expect(open.size).toBe(1), { timeout: 10_000 });
  expect(performance.now() - started).toBeGreaterThanOrEqual(450);
  expect(stalled.socket.readableLength + stalled.socket.bytesRead).toBeLessThan(BIG);
  const [left] = open;
  expect(left!.destroyed).toBe(false);
  expect(taken.socket.destroyed).toBe(false);
  // The taker closes it (a listen session at its module's close); then the drain ends.
  left!.destroy();
  await drained;
});
