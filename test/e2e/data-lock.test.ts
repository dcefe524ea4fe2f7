import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.js';
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
    const restarted = await startCli(args('0'));
    for (const orderNo of acknowledged) expect((await fetch(`${restarted.url}/__sandbox/orders/${orderNo}`, { headers })).status).toBe(200);
    expect(await restarted.stop()).toBe(0);
  }, 60_000);
});
