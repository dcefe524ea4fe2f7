import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';

// The README's quick start is `npm install && npm start`. npm runs the start script through
// `sh -c` and passes a SIGTERM to that shell only: a script's `kill $!` of its `npm start`
// left the sandbox running, holding its port and its data file's lock.
const work = mkdtempSync(join(tmpdir(), 'sandbox-npm-start-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const TOKEN = 'npm-start-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

/** Ends the sandbox left running (the pid its data file's lock names), so that a failing run leaves no process behind. */
function stopOrphan(data: string): void {
  try {
    process.kill((JSON.parse(readFileSync(`${data}.lock`, 'utf8')) as { pid: number }).pid, 'SIGKILL');
  } catch {
    // No lock, or the process has ended.
  }
}

describe('the sandbox started by `npm start`', () => {
  it('stops (data kept, lock released) when the npm start is sent SIGTERM, which npm does not pass on', async () => {
    const data = join(work, 'data.json');
    const npm = spawn('npm', ['start', '--silent', '--', '--port', '0', '--data', data, '--token', TOKEN], { env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const onData = (chunk: Buffer) => void (output += chunk.toString());
    npm.stdout.on('data', onData);
    npm.stderr.on('data', onData);
    const until = Date.now() + 45_000;
    while (!/listening on http:\/\/\S+/.test(output) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
    expect(url, `npm start did not start the sandbox:\n${output}`).toBeDefined();
    const created = await fetch(`${url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
    expect(created.status).toBe(201);
    const { order_numbers } = (await created.json()) as { order_numbers: string[] };

    npm.kill('SIGTERM');
    const closed = await (async () => {
      for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 200))) {
        try {
          await fetch(`${url}/__sandbox/health`);
        } catch {
          return true;
        }
      }
      return false;
    })();
    if (!closed) stopOrphan(data);
    expect(closed, `the port still answers 20 s after npm start was sent SIGTERM:\n${output}`).toBe(true);

    // Stopped gracefully: the next start takes the data file and finds the order.
    const next = await startCli(['--port', '0', '--data', data, '--token', TOKEN, '--log-level', 'warn']);
    try {
      expect((await fetch(`${next.url}/__sandbox/orders/${order_numbers[0]}`, { headers })).status).toBe(200);
    } finally {
      await next.stop();
    }
  }, 90_000);
});
