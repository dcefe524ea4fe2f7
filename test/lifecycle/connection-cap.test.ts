import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';

const open = (port: number): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });

/** What a connection reads until the server closes it (or `ms` pass: then undefined). */
const readUntilClosed = (socket: Socket, ms: number): Promise<string | undefined> =>
  new Promise((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve(undefined), ms);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(text);
    });
  });

let cli: RunningCli | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await cli?.stop();
  cli = undefined;
});

describe('--max-connections', () => {
  it('closes a connection past the cap as it arrives, says so in the log once, and serves again once one closes', async () => {
    cli = await startCli(['--port', '0', '--data', ':memory:', '--token', 'cap-token-0001', '--max-connections', '3']);
    const port = Number(new URL(cli.url).port);
    // Three idle connections (a slow client's, a flood's) take the room.
    for (let i = 0; i < 3; i++) sockets.push(await open(port));
    const refused = [await open(port), await open(port)];
    sockets.push(...refused);
    const answers = await Promise.all(refused.map((socket) => {
      socket.write('GET /__sandbox/health HTTP/1.1\r\nHost: x\r\n\r\n');
      return readUntilClosed(socket, 5_000);
    }));
    expect(answers).toEqual(['', '']);
    await cli.printed('connections refused');
    const warnings = cli.output().split('\n').filter((line) => line.includes('connections refused'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, dropped: 1, max_connections: 3, top_remote: '127.0.0.1' });

    sockets.shift()!.destroy();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const health = await fetch(`${cli.url}/__sandbox/health`);
    expect(health.status).toBe(200);
  }, 30_000);

  it('is refused at start unless a whole number of at least 1', async () => {
    const { runCli } = await import('../support/cli.js');
    const run = await runCli(['--port', '0', '--data', ':memory:', '--max-connections', '0']);
    expect(run.code).not.toBe(0);
    expect(run.stderr + run.stdout).toMatch(/maxConnections must be a whole number from 1/);
  }, 30_000);
});
