import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/app/sandbox.js';
import { startCli } from '../support/cli.js';
import { specExample } from '../support/orders.js';

let sandbox: Sandbox | undefined;
afterEach(() => sandbox?.close());

describe('a real clock with --speed', () => {
  it('completes a delivered journey within a few seconds of wall time', async () => {
    // 3 simulated days in about 1.3 s of wall time.
    sandbox = await createSandbox({ port: 0, clock: 'real', speed: 200_000, awbDelay: '1s', tokens: ['t'] });
    const headers = { authorization: 'Bearer t', 'content-type': 'application/json' };
    const created = await (await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(specExample()) })).json();
    const orderNo = created.order_numbers[0];
    const started = Date.now();
    let state: { status: string; awb: string } | undefined;
    while (Date.now() - started < 8_000) {
      state = await (await fetch(`${sandbox.url}/__sandbox/orders/${orderNo}`, { headers })).json();
      if (state!.status === 'delivered') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(state!.status).toBe('delivered');
    expect(Date.now() - started).toBeLessThan(8_000);
    const tracking = await (await fetch(`${sandbox.url}/v1/order/tracking/${state!.awb}`, { headers })).json();
    expect(tracking.last_status).toBe('2');
  });
});

/** The CLI's start banner, once printed whole (its last line names the dashboard). */
async function bannerOf(cli: { output(): string }): Promise<string> {
  for (let i = 0; i < 100 && !cli.output().includes('dashboard:'); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  return cli.output();
}

describe('the start banner of a data file whose clock ran fast', () => {
  it('says how far the clock is ahead of wall time, since a restart at wall pace goes on from there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'banner-lead-'));
    try {
      const data = join(dir, 'sandbox.json');
      const fresh = await startCli(['--port', '0', '--data', data, '--token', 't', '--speed', '200000', '--log-level', 'silent']);
      expect(await bannerOf(fresh)).toMatch(/clock: {2}real x200000\n/);
      // 200,000 times wall pace: a second and a half is about three days and a half.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await fresh.stop()).toBe(0);
      const again = await startCli(['--port', '0', '--data', data, '--token', 't', '--log-level', 'silent']);
      try {
        expect(await bannerOf(again)).toMatch(/clock: {2}real x1, \d+d[\dhms]* ahead of wall time \(kept in the data: no clock moves back\)\n/);
      } finally {
        await again.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('names the docs and the dashboard at localhost when it listens on every address', async () => {
    const cli = await startCli(['--port', '0', '--data', ':memory:', '--log-level', 'silent'], { HOST: '0.0.0.0' });
    try {
      const banner = await bannerOf(cli);
      const port = /listening on http:\/\/0\.0\.0\.0:(\d+)/.exec(banner)![1];
      expect(banner).toContain(`docs:   http://localhost:${port}/docs   dashboard: http://localhost:${port}/dashboard`);
    } finally {
      await cli.stop();
    }
  }, 30_000);
});
