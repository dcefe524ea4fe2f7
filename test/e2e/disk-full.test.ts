import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCli, startCli } from '../support/cli.js';
import { createRequest } from '../support/orders.js';

const headers = { authorization: 'Bearer disk', 'content-type': 'application/json' };

/** A tmpfs of our own (6 MiB unless told), or why there is none (not root, mount not permitted). */
function mountSmallDisk(size = '6m'): { dir: string } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'not root' };
  const dir = mkdtempSync(join(tmpdir(), 'sandbox-disk-'));
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mount.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `mount -t tmpfs failed: ${(mount.stderr || mount.error?.message || '').trim()}` };
  }
  return { dir };
}

const disk = mountSmallDisk();
if ('skip' in disk) console.log(`disk-full test skipped: ${disk.skip}`);
const smallDisk = mountSmallDisk('600k');

afterAll(() => {
  for (const mounted of [disk, smallDisk]) {
    if ('skip' in mounted) continue;
    spawnSync('umount', [mounted.dir]);
    rmSync(mounted.dir, { recursive: true, force: true });
  }
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

describe('a start on a disk all but full (a 600k tmpfs left with 4 KiB, through the CLI)', () => {
  it.skipIf('skip' in smallDisk)('stops naming the journal segment it could not write, exits 1, and leaves no lock and every file as it was', async () => {
    const dir = (smallDisk as { dir: string }).dir;
    const data = join(dir, 'sandbox.json');
    const args = ['--port', '0', '--data', data, '--token', 'disk', '--log-level', 'silent'];
    const seeded = await startCli([...args, '--clock', 'manual']);
    for (let i = 0; i < 5; i += 1) {
      const res = await fetch(`${seeded.url}/v1/order`, { method: 'POST', headers, body: JSON.stringify(createRequest(10)) });
      expect(res.status).toBe(201);
      await res.arrayBuffer();
    }
    expect(await seeded.stop()).toBe(0);
    const files = () => Object.fromEntries(readdirSync(dir).filter((name) => name !== 'filler').map((name) => [name, createHash('sha256').update(readFileSync(join(dir, name))).digest('hex')]));
    const before = files();
    const filler = join(dir, 'filler');
    const { bavail, bsize } = statfsSync(dir);
    writeFileSync(filler, Buffer.alloc(bavail * bsize - 4096)); // the lock file takes the last block

    // A real clock: the start saves it, the first journal line, which the disk refuses.
    const refused = spawnCli(args);
    let stderr = '';
    refused.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    refused.stdout!.resume();
    const code = await new Promise<number | null>((resolve) => refused.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`Cannot write the journal ${data}\\.wal\\.\\d+ \\(ENOSPC: no space left on device, write\\) as the sandbox started; nothing was left behind\\. Free some space and start again\\.`));
    expect(stderr).not.toContain('cannot save changes right now');
    expect(files()).toEqual(before); // no lock, the data file and its journal as they were

    rmSync(filler);
    const restarted = await startCli(args);
    const { total } = (await (await fetch(`${restarted.url}/__sandbox/orders?limit=1`, { headers })).json()) as { total: number };
    expect(total).toBe(50);
    expect(await restarted.stop()).toBe(0);
  }, 60_000);
});
