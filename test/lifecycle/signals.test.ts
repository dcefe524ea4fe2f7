import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';
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

  it('quits at once on a second SIGINT (Ctrl-C twice), 130, keeping every acknowledged order for the next start', async () => {
    const { cli, data } = await stopping();
    cli.process.kill('SIGINT');
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
