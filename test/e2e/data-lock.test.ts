import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startCli, type RunningCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';
import { tempDir } from '../support/tmp.js';

const headers = { authorization: 'Bearer lock', 'content-type': 'application/json' };
const contents = (dir: string) => Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name)).toString('base64')]));

describe('a second sandbox on a data file in use', () => {
  const dir = tempDir();

  it('exits 1 at once naming the file and the holder, on another port and on the same one, and touches none of the first one\'s files', async () => {
    const data = join(dir(), 'sandbox.json');
    const args = (port: string) => ['--port', port, '--data', data, '--token', 'lock', '--clock', 'manual', '--log-level', 'silent'];
    const first = await startCli(args('0'));
    const acknowledged: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await fetch(`${first.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(2)) });
      expect(res.status).toBe(201);
      acknowledged.push(...((await res.json()) as { order_numbers: string[] }).order_numbers);
    }
    const before = contents(dir());
    const message = new RegExp(`The data file ${data} is in use by another sandbox \\(pid ${first.process.pid} on host ${hostname()}, since `);

    for (const port of ['0', new URL(first.url).port]) {
      const started = Date.now();
      const second = await runCli(args(port));
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(message);
      expect(second.stdout).not.toContain('listening on');
      expect(Date.now() - started).toBeLessThan(15_000); // at once: the time to load node and the spec, no waiting on the lock
    }
    expect(contents(dir())).toEqual(before);

    // The first sandbox is still the one serving, and everything it acknowledged survives a SIGKILL.
    expect((await fetch(`${first.url}/__sandbox/orders/${acknowledged[0]}`, { headers })).status).toBe(200);
    await first.stop('SIGKILL');
    const restarted = await startCli(args('0').map((arg) => (arg === 'silent' ? 'warn' : arg)));
    for (const orderNo of acknowledged) expect((await fetch(`${restarted.url}/__sandbox/orders/${orderNo}`, { headers })).status).toBe(200);
    // The restart says whose lock it took over: a reader of the logs learns of the kill.
    const tookOver = restarted.output().split('\n').find((line) => line.includes('took over the lock'));
    expect(JSON.parse(tookOver!)).toMatchObject({ level: 40, holder_pid: first.process.pid, holder_host: hostname() });
    expect(await restarted.stop()).toBe(0);
  }, 60_000);

  // Two containers given the same hostname, on one volume: each is pid 1 in a pid namespace of its own.
  // unshare(1) makes such namespaces (root only); a container restarted after a SIGKILL gets a new one too.
  const asContainer = ['unshare', '--kill-child', '--pid', '--fork', '--mount-proc'];
  const canUnshare = spawnSync(asContainer[0]!, [...asContainer.slice(1), 'true']).status === 0;

  it.skipIf(!canUnshare)('refuses a second container with the same hostname (both pid 1), and lets a container restarted after a SIGKILL in once its old lock goes unrefreshed', async () => {
    const data = join(dir(), 'shared-volume.json');
    const args = ['--port', '0', '--data', data, '--token', 'lock', '--clock', 'manual', '--log-level', 'silent'];
    const running: RunningCli[] = [];
    try {
      const first = await startCli(args, {}, asContainer);
      running.push(first);
      const res = await fetch(`${first.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(1)) });
      expect(res.status).toBe(201);
      const [orderNo] = ((await res.json()) as { order_numbers: string[] }).order_numbers;
      expect(JSON.parse(readFileSync(`${data}.lock`, 'utf8'))).toMatchObject({ pid: 1, host: hostname() });

      const second = await runCli(args, {}, asContainer);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`The data file ${data} is in use by another sandbox (pid 1 on host ${hostname()}, in another container, pid namespace or machine`);
      expect(second.stdout).not.toContain('listening on');
      expect((await fetch(`${first.url}/__sandbox/orders/${orderNo}`, { headers })).status).toBe(200);

      await first.stop('SIGKILL'); // unshare --kill-child takes the sandbox with it, as a container's end does
      const started = Date.now();
      const restarted = await startCli(args, {}, asContainer);
      running.push(restarted);
      expect(Date.now() - started).toBeLessThan(30_000); // 5 s unrefreshed, then the usual start
      expect((await fetch(`${restarted.url}/__sandbox/orders/${orderNo}`, { headers })).status).toBe(200);
      // unshare ignores SIGTERM: `docker stop` signals the container's pid 1, the sandbox itself.
      process.kill(Number(execFileSync('pgrep', ['-P', String(restarted.process.pid)]).toString().trim()), 'SIGTERM');
      expect(await new Promise((resolve) => restarted.process.once('exit', resolve))).toBe(0);
    } finally {
      for (const cli of running) cli.process.kill('SIGKILL');
    }
  }, 90_000);
});

describe('a port in use', () => {
  it('exits 1 with a message that says what to do, without a stack', async () => {
    const { createServer } = await import('node:net');
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((holder.address() as { port: number }).port);
      const started = await runCli(['--port', port, '--data', ':memory:', '--log-level', 'silent']);
      expect(started.code).toBe(1);
      expect(started.stderr).toBe(`shipping-sandbox: listen EADDRINUSE: address already in use 127.0.0.1:${port}. Another process listens there: stop it, or start this sandbox with another --port (PORT; 0 picks a free one).\n`);
    } finally {
      holder.close();
    }
  }, 30_000);
});
