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

  it('keeps serving after a hang-up (a terminal or ssh session closed), which ends npm too', async () => {
    const data = join(work, 'hangup.json');
    // A process group of its own, as a terminal's job is: the hang-up goes to npm, its shell and the sandbox alike.
    const npm = spawn('npm', ['start', '--silent', '--', '--port', '0', '--data', data, '--token', TOKEN], { env: { ...process.env, NODE_ENV: 'production' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    const onData = (chunk: Buffer) => void (output += chunk.toString());
    npm.stdout.on('data', onData);
    npm.stderr.on('data', onData);
    try {
      const until = Date.now() + 45_000;
      while (!/listening on http:\/\/\S+/.test(output) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
      const url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
      expect(url, `npm start did not start the sandbox:\n${output}`).toBeDefined();
      const npmGone = new Promise((resolve) => npm.once('exit', resolve));
      process.kill(-npm.pid!, 'SIGHUP');
      await npmGone;
      // Longer than the watch of the parent takes to see it gone (250 ms).
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect((await fetch(`${url}/__sandbox/health`)).status, output).toBe(200);
    } finally {
      stopOrphan(data);
    }
  }, 90_000);
});

describe("the sandbox started in the background by another package's npm start", () => {
  it('keeps running when that start script ends (its variables say start, but not this package)', async () => {
    const data = join(work, 'background.json');
    const cli = [process.execPath, '--import', 'tsx', 'src/cli.ts', '--port', '0', '--data', data, '--token', TOKEN, '--log-level', 'warn'].map((arg) => `'${arg}'`).join(' ');
    // As a partner's own "start": "shipping-sandbox ... & <its app>" runs it: npm sets these for everything the script
    // starts. The script ends once the sandbox holds its data file (its watch of the parent, were there one, is on by then).
    const script = spawn('sh', ['-c', `${cli} > /dev/null 2>&1 & i=0; while [ ! -f '${data}.lock' ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; sleep 0.5`], { env: { ...process.env, NODE_ENV: 'production', npm_lifecycle_event: 'start', npm_package_name: 'partner-app' }, stdio: 'ignore' });
    try {
      await new Promise((resolve) => script.once('exit', resolve));
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(() => process.kill((JSON.parse(readFileSync(`${data}.lock`, 'utf8')) as { pid: number }).pid, 0), 'the sandbox ended with the script that started it').not.toThrow();
    } finally {
      stopOrphan(data);
    }
  }, 60_000);
});
