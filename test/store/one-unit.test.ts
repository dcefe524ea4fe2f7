import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock/clock.js';
import { Scheduler } from '../../src/jobs/index.js';
import { Unavailable } from '../../src/shared/index.js';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import type { JobKind } from '../../src/records/index.js';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { orderRecord } from './contract.js';

/** The real file system, counting the journal's writes. */
class CountingFileSystem extends FaultyFileSystem {
  writes = 0;

  override writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number {
    this.writes += 1;
    return super.writeSync(fd, buffer, offset, length);
  }
}

const dirs: string[] = [];
const open: EmbeddedStorage[] = [];
afterEach(async () => {
  for (const storage of open.splice(0)) await storage.close();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function onFile(): Promise<{ storage: EmbeddedStorage; fs: CountingFileSystem; reopen: () => Promise<EmbeddedStorage> }> {
  const dir = mkdtempSync(join(tmpdir(), 'one-unit-'));
  dirs.push(dir);
  const path = join(dir, 'sandbox.json');
  const fs = new CountingFileSystem();
  const storage = await EmbeddedStorage.open({ path, requestLogSize: 10, fileSystem: fs });
  open.push(storage);
  const reopen = async () => {
    await storage.close();
    open.splice(open.indexOf(storage), 1);
    const again = await EmbeddedStorage.open({ path, requestLogSize: 10 });
    open.push(again);
    return again;
  };
  return { storage, fs, reopen };
}

const insert = (storage: EmbeddedStorage, orderNo: string) => storage.transaction((tx) => tx.orders.insert(orderRecord(orderNo, 'c', 1_000)));

describe('a unit of work made of parts (embedded store)', () => {
  it('commits its parts with one journal write; a part that threw leaves nothing, the others stand', async () => {
    const { storage, fs, reopen } = await onFile();
    const before = fs.writes;
    await storage.inOneUnit(async () => {
      await insert(storage, '1001');
      await expect(
        storage.transaction(async (tx) => {
          await tx.orders.insert(orderRecord('1002', 'c', 1_000));
          throw new Error('this part fails');
        }),
      ).rejects.toThrow('this part fails');
      await insert(storage, '1003');
    });
    expect(fs.writes - before).toBe(1);
    const reopened = await reopen();
    expect(await reopened.orders.get('1001')).toBeDefined();
    expect(await reopened.orders.get('1002')).toBeUndefined();
    expect(await reopened.orders.get('1003')).toBeDefined();
  });

  it('undoes a part within a part alone, and the whole of an outer part that threw after an inner one was kept', async () => {
    const { storage, reopen } = await onFile();
    const fails = (message: string) => {
      throw new Error(message);
    };
    await storage.inOneUnit(async () => {
      await storage.transaction(async (tx) => {
        await tx.orders.insert(orderRecord('4001', 'c', 1_000));
        await expect(storage.transaction(async (inner) => fails(String(await inner.orders.insert(orderRecord('4002', 'c', 1_000)))))).rejects.toThrow();
      });
      await expect(
        storage.transaction(async (tx) => {
          await storage.transaction((inner) => inner.orders.insert(orderRecord('4003', 'c', 1_000)));
          const first = (await tx.orders.get('4001'))!;
          await tx.orders.update({ ...first, status: 'cancelled' });
          fails('the outer part fails');
        }),
      ).rejects.toThrow('the outer part fails');
    });
    const reopened = await reopen();
    expect((await reopened.orders.get('4001'))?.status).toBe('created');
    expect(await reopened.orders.get('4002')).toBeUndefined();
    expect(await reopened.orders.get('4003')).toBeUndefined();
  });

  it('shows its parts to others only once committed', async () => {
    const { storage } = await onFile();
    let seenInside: unknown = 'not read';
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    const unit = storage.inOneUnit(async () => {
      await insert(storage, '2001');
      await hold;
    });
    // Outside the unit's async context: a reader of committed records.
    await new Promise((resolve) => setTimeout(resolve, 10));
    seenInside = await storage.orders.get('2001');
    release();
    await unit;
    expect(seenInside).toBeUndefined();
    expect(await storage.orders.get('2001')).toBeDefined();
  });

  it('saves none of its parts when its commit fails, and says the store is unavailable', async () => {
    const { storage, fs, reopen } = await onFile();
    const unit = storage.inOneUnit(async () => {
      await insert(storage, '3001');
      await insert(storage, '3002');
      fs.failing = 'ENOSPC';
    });
    await expect(unit).rejects.toBeInstanceOf(Unavailable);
    fs.failing = undefined;
    expect(await storage.orders.get('3001')).toBeUndefined();
    await insert(storage, '3003');
    const reopened = await reopen();
    expect(await reopened.orders.get('3001')).toBeUndefined();
    expect(await reopened.orders.get('3002')).toBeUndefined();
    expect(await reopened.orders.get('3003')).toBeDefined();
  });
});

describe('a row of due jobs that each work in one transaction', () => {
  /** Three jobs of client c due at once, whose handler inserts an order and completes the job in one transaction; job 'b' throws the first time. */
  async function runRow(oneTransaction: boolean) {
    const { storage, fs } = await onFile();
    const errors: string[] = [];
    const scheduler = new Scheduler(storage, new ManualClock(0), { onError: (_, kind, key) => errors.push(`${kind}:${key}`) });
    const tries = new Map<string, number>();
    scheduler.register({
      kind: 'awb',
      oneTransaction,
      run: (job) =>
        storage.transaction(async (tx) => {
          tries.set(job.key, (tries.get(job.key) ?? 0) + 1);
          await tx.orders.insert(orderRecord(job.key, 'c', 0));
          if (job.key === '9002' && tries.get(job.key) === 1) throw new Error('the AWB service had a hiccup');
          await tx.jobs.complete(job);
          return 'completed' as const;
        }),
    });
    for (const key of ['9001', '9002', '9003']) await storage.jobs.schedule({ kind: 'awb' as JobKind, key, client_id: 'c', due_at: 1_000 });
    const before = fs.writes;
    await scheduler.advance('c', 2_000);
    const writes = fs.writes - before;
    const orders = await Promise.all(['9001', '9002', '9003'].map(async (key) => (await storage.orders.get(key)) !== undefined));
    const retryDue = (await storage.jobs.get('awb' as JobKind, '9002'))?.due_at;
    await scheduler.stop();
    return { writes, orders, errors, retryDue, left: await storage.jobs.count() };
  }

  it('commits the row once, keeps what the others did and retries the job that failed, as job by job would', async () => {
    const alone = await runRow(false);
    const row = await runRow(true);
    expect(row.orders).toEqual([true, false, true]);
    expect(row.orders).toEqual(alone.orders);
    expect(row.errors).toEqual(['awb:9002']);
    expect(row.retryDue).toBe(alone.retryDue);
    expect(row.retryDue).toBeGreaterThan(1_000);
    expect(row.left).toBe(1);
    // Three commits (one per job) became one.
    expect(alone.writes - row.writes).toBe(2);
  });

  it('reports a failure of its commit that is not the store being unavailable, and runs the row again job by job', async () => {
    const { storage } = await onFile();
    const errors: string[] = [];
    const scheduler = new Scheduler(storage, new ManualClock(0), { onError: (error, kind, key) => errors.push(`${kind}:${key}: ${(error as Error).message}`) });
    const runs: string[] = [];
    scheduler.register({
      kind: 'awb',
      oneTransaction: true,
      run: (job) =>
        storage.transaction(async (tx) => {
          runs.push(job.key);
          await tx.orders.insert(orderRecord(job.key, 'c', 0));
          await tx.jobs.complete(job);
          return 'completed' as const;
        }),
    });
    for (const key of ['9101', '9102', '9103']) await storage.jobs.schedule({ kind: 'awb' as JobKind, key, client_id: 'c', due_at: 1_000 });
    // A fault of the sandbox's own, injected: the first commit's records cannot be packed for the file.
    const store = (storage as unknown as { store: { kept: (...args: unknown[]) => unknown } }).store;
    const kept = store.kept.bind(store);
    let thrown = false;
    store.kept = (...args: unknown[]) => {
      if (!thrown) {
        thrown = true;
        throw new TypeError('a record the file cannot take');
      }
      return kept(...args);
    };
    await scheduler.advance('c', 2_000);
    await scheduler.stop();
    expect(errors).toEqual(['awb:9101: a record the file cannot take']);
    expect(runs).toEqual(['9101', '9102', '9103', '9101', '9102', '9103']);
    for (const key of ['9101', '9102', '9103']) expect(await storage.orders.get(key)).toBeDefined();
    expect(await storage.jobs.count()).toBe(0);
  });
});

describe('a unit of work the store refuses a record of (embedded store)', () => {
  it('keeps nothing of it, in memory or in the next unit’s journal line', async () => {
    const { storage, reopen } = await onFile();
    // What the store keeps of a record (JournaledFile's `kept`, protected) refuses the second order.
    const file = (storage as unknown as { store: { kept: (collection: string, value: unknown, current: unknown) => unknown } }).store;
    const kept = file.kept.bind(file);
    let orders = 0;
    file.kept = (collection, value, current) => {
      if (collection === 'orders' && ++orders === 2) throw new Error('the store refuses this record');
      return kept(collection, value, current);
    };
    await expect(
      storage.transaction(async (tx) => {
        await tx.orders.insert(orderRecord('2001', 'c', 1_000));
        await tx.orders.insert(orderRecord('2002', 'c', 1_000));
      }),
    ).rejects.toThrow('the store refuses this record');
    file.kept = kept;
    expect(await storage.orders.get('2001')).toBeUndefined();
    await insert(storage, '2003');
    const again = await reopen();
    expect(await again.orders.get('2001')).toBeUndefined();
    expect(await again.orders.get('2003')).toBeDefined();
  });
});
