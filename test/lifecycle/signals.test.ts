import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawnCli, startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { onPostgres } from '../support/store-kind.js';
import { Receiver } from '../webhooks/receiver.js';

const TOKEN = 'signals-token';
let dir: string;
let receiver: Receiver;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-signals-'));
  receiver = await Receiver.start();
  // A receiver that never answers: the stop waits for the attempt under way, up to --webhook-timeout.
  receiver.respond = () => ({ status: 200, hang: true });
});
afterEach(async () => {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI on a data file, an AWB webhook on its way to the silent receiver when it returns. */
async function stopping(): Promise<{ cli: RunningCli; data: string }> {
  const data = join(dir, 'sandbox.json');
  const cli = await startCli(['--port', '0', '--data', data, '--token', TOKEN, '--awb-delay', '0s', '--webhook-url', receiver.url, '--webhook-timeout', '3s']);
  const created = await fetch(`${cli.url}/v1/order`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(createRequest(1)) });
  expect(created.status).toBe(201);
  await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(1);
  return { cli, data };
}

describe('signals while the sandbox stops', () => {
  it('lets the stop finish on a second SIGTERM (a process manager, a signal to the group): exit 0, the lock given back', async () => {
    const { cli, data } = await stopping();
    cli.process.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await cli.stop('SIGTERM')).toBe(0);
    expect(cli.output()).toContain('already stopping: the stop goes on');
    if (!onPostgres) expect(existsSync(`${data}.lock`)).toBe(false);
  }, 30_000);

  it('takes a SIGINT right after the first (a wrapper relaying the same Ctrl-C, as the tsx command line does) as the same press: the stop finishes, exit 0', async () => {
    const { cli, data } = await stopping();
    cli.process.kill('SIGINT');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await cli.stop('SIGINT')).toBe(0);
    expect(cli.output()).not.toContain('stopped at once by a second SIGINT');
    expect(cli.output()).toContain('"msg":"stopped"');
    if (!onPostgres) expect(existsSync(`${data}.lock`)).toBe(false);
  }, 30_000);

  it('quits at once on a second SIGINT (Ctrl-C twice), 130, keeping every acknowledged order for the next start', async () => {
    const { cli, data } = await stopping();
    cli.process.kill('SIGINT');
    // A second press: 300 ms after the sandbox took the first (its line), not after the first was sent.
    await expect.poll(() => cli.output(), { timeout: 10_000, interval: 5 }).toContain('"msg":"stopping"');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const began = Date.now();
    expect(await cli.stop('SIGINT')).toBe(130);
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(cli.output()).toContain('stopped at once by a second SIGINT');
    const again = await startCli(['--port', '0', '--data', data, '--token', TOKEN]);
    try {
      const listed = (await (await fetch(`${again.url}/__sandbox/orders`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { total: number };
      expect(listed.total).toBe(1);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  }, 30_000);
});

/** The CLI's output so far and its exit code, once it exits. */
function watched(child: ChildProcess): { output: () => string; exited: Promise<number | null> } {
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { output: () => output, exited: new Promise((resolve) => child.once('close', (code) => resolve(code))) };
}

/** A port of this host that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('signals while the sandbox starts', () => {
  it('ends the start on a SIGTERM while it waits for the database: one line, exit 0, nothing served', async () => {
    const database = `postgres://sandbox@127.0.0.1:${await closedPort()}/sandbox`;
    const child = spawnCli(['--port', '0', '--database-url', database, '--database-wait', '60s', '--token', TOKEN]);
    const cli = watched(child);
    await expect.poll(cli.output, { timeout: 15_000 }).toContain('the database cannot be reached yet');
    const began = Date.now();
    child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(cli.output().match(/start stopped/g)).toHaveLength(1);
    expect(cli.output()).toContain('start stopped before the sandbox listened: what it had opened is closed, its store included');
    // A database has no data file, nor its lock.
    expect(cli.output()).not.toContain('data file');
    expect(cli.output()).toContain('"reason":"SIGTERM"');
    expect(cli.output()).not.toContain('listening on');
  }, 30_000);

  it.skipIf(onPostgres)('ends the start on a SIGTERM while the journal replays: exit 0, the lock given back, the files as they were', async () => {
    const data = join(dir, 'sandbox.json');
    writeFileSync(data, '{"schema_version":4,"journal_generation":1}');
    // Some 30 MB of commits: a replay of a few hundred ms, the window the signal is sent in.
    writeFileSync(`${data}.wal.1`, `[{"c":"meta","k":"filler","v":"${'x'.repeat(200)}"}]\n`.repeat(150_000));
    const journal = statSync(`${data}.wal.1`).size;
    const child = spawnCli(['--port', '0', '--data', data, '--token', TOKEN]);
    const cli = watched(child);
    // The lock is this process's once it names its pid: the data file is read and its journal replayed after that.
    const holding = () => existsSync(`${data}.lock`) && readFileSync(`${data}.lock`, 'utf8').includes(`"pid":${child.pid}`);
    await expect.poll(holding, { timeout: 15_000, interval: 5 }).toBe(true);
    child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(cli.output()).toContain('start stopped');
    expect(cli.output()).not.toContain('listening on');
    expect(existsSync(`${data}.lock`)).toBe(false);
    expect(readFileSync(data, 'utf8')).toBe('{"schema_version":4,"journal_generation":1}');
    expect(statSync(`${data}.wal.1`).size).toBe(journal);
    expect(existsSync(`${data}.wal.2`)).toBe(false);
  }, 30_000);
});

describe('SIGHUP', () => {
  it('is ignored with a warning: the sandbox keeps serving, and stops on SIGTERM as ever', async () => {
    const data = join(dir, 'sandbox.json');
    const cli = await startCli(['--port', '0', '--data', data, '--token', TOKEN]);
    cli.process.kill('SIGHUP');
    await expect.poll(cli.output, { timeout: 5_000 }).toContain('SIGHUP ignored');
    const health = await fetch(`${cli.url}/__sandbox/health`);
    expect(health.status).toBe(200);
    expect(cli.output()).not.toContain('stopping');
    expect(await cli.stop('SIGTERM')).toBe(0);
    expect(cli.output()).toContain('"msg":"stopping"');
    const stopped = cli.output().split('\n').find((line) => line.includes('"msg":"stopped"'));
    expect(JSON.parse(stopped!)).toMatchObject({ signal: 'SIGTERM', ms: expect.any(Number) });
    if (!onPostgres) expect(existsSync(`${data}.lock`)).toBe(false);
  }, 30_000);
});
