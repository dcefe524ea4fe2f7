import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';

const headers = { authorization: 'Bearer disk', 'content-type': 'application/json' };

/** A 6 MiB tmpfs of our own, or why there is none (not root, mount not permitted). */
function mountSmallDisk(): { dir: string } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'not root' };
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-disk-'));
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=6m,mode=0700', 'tmpfs', dir], { encoding: 'utf8' });
  if (mount.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `mount -t tmpfs failed: ${(mount.stderr || mount.error?.message || '').trim()}` };
  }
  return { dir };
}

const disk = mountSmallDisk();
if ('skip' in disk) console.log(`disk-full test skipped: ${disk.skip}`);

afterAll(() => {
  if ('skip' in disk) return;
  spawnSync('umount', [disk.dir]);
  rmSync(disk.dir, { recursive: true, force: true });
});

describe('a full disk under create load (a 6 MiB tmpfs, through the CLI)', () => {
  it.skipIf('skip' in disk)('acknowledges nothing it does not keep, carries on when space returns, and restarts after a SIGKILL', async () => {
    const dir = (disk as { dir: string }).dir;
    const filler = join(dir, 'filler');
    writeFileSync(filler, Buffer.alloc(4 * 2 ** 20)); // leaves ~2 MiB for the sandbox
    const data = join(dir, 'sandbox.json');
    const args = ['--port', '0', '--data', data, '--token', 'disk', '--clock', 'manual', '--log-level', 'silent'];
    const sandbox = await startCli(args);
    const acknowledged = new Set<string>();
    const statuses = new Map<number, number>();
    const refusals: Array<{ retryAfter: string | null; body: unknown }> = [];
    const create = async () => {
      const res = await fetch(`${sandbox.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(10)) });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 201) for (const orderNo of ((await res.json()) as { order_numbers: string[] }).order_numbers) acknowledged.add(orderNo);
      else refusals.push({ retryAfter: res.headers.get('retry-after'), body: await res.json().catch(() => null) });
      return res.status;
    };
    const health = async () => (await (await fetch(`${sandbox.url}/__sandbox/health`)).json()) as { status: string; store: string; store_error?: string };
    const load = async (until: () => boolean) => {
      const worker = async () => {
        for (let i = 0; i < 2_000 && !until(); i += 1) await create();
      };
      await Promise.all(Array.from({ length: 8 }, worker));
    };

    await load(() => [...statuses.keys()].filter((s) => s !== 201).reduce((n, s) => n + statuses.get(s)!, 0) >= 50);
    const failedWhileFull = [...statuses.entries()].filter(([s]) => s !== 201);
    expect(failedWhileFull.length).toBeGreaterThan(0); // the disk did fill up
    // 503 with Retry-After and the error envelope: never a 500, a 4xx or a dropped connection.
    expect(failedWhileFull.map(([status]) => status)).toEqual([503]);
    for (const refusal of refusals) {
      expect(refusal.retryAfter).toMatch(/^\d+$/);
      expect(refusal.body).toEqual({ success: false, message: expect.stringContaining('ENOSPC'), errors: [] });
    }
    // Health answers 200 and shows the store degraded while writes fail.
    expect(await health()).toMatchObject({ status: 'ok', store: 'degraded', store_error: 'ENOSPC' });
    const ackedWhileFull = acknowledged.size;

    rmSync(filler); // space comes back: no restart needed
    statuses.clear();
    await load(() => (statuses.get(201) ?? 0) >= 20);
    expect(acknowledged.size).toBeGreaterThan(ackedWhileFull);
    expect(statuses.get(201)).toBeGreaterThanOrEqual(20);
    expect(await health()).toMatchObject({ status: 'ok', store: 'ok' });
    expect((await health()).store_error).toBeUndefined();

    await sandbox.stop('SIGKILL');
    const restarted = await startCli(args);
    const missing: string[] = [];
    for (const orderNo of acknowledged) {
      const res = await fetch(`${restarted.url}/__sandbox/orders/${orderNo}`, { headers });
      if (res.status !== 200) missing.push(orderNo);
      await res.arrayBuffer();
    }
    const { total } = (await (await fetch(`${restarted.url}/__sandbox/orders?limit=1`, { headers })).json()) as { total: number };
    console.log(`disk-full test: answers while full ${JSON.stringify(Object.fromEntries(failedWhileFull))}, ${acknowledged.size} orders acknowledged, ${total} stored after the restart`);
    expect(missing).toEqual([]);
    expect(total).toBe(acknowledged.size);
    expect(await restarted.stop()).toBe(0);
  }, 120_000);
});
