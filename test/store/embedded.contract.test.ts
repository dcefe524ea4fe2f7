import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedStorage } from '../../src/store/embedded/storage.js';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { orderRecord, storageContract } from './contract.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
let current = '';
let fileSystem = new FaultyFileSystem();
const freshFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'contract-'));
  dirs.push(dir);
  current = join(dir, 'sandbox.json');
  fileSystem = new FaultyFileSystem();
  return EmbeddedStorage.open({ path: current, requestLogSize: 10, fileSystem });
};
const faults = {
  fail: () => void (fileSystem.failing = 'ENOSPC'),
  heal: () => void (fileSystem.failing = undefined),
};

storageContract('embedded, in memory', () => EmbeddedStorage.open({ path: ':memory:', requestLogSize: 10 }));
storageContract('embedded, JSON data file', freshFile, () => EmbeddedStorage.open({ path: current, requestLogSize: 10 }), faults);

describe('embedded store start-up', () => {
  it('loads the pending jobs, not a job per order: 100,000 orders of which 1,000 have a job', async () => {
    const storage = await freshFile();
    for (let start = 0; start < 100_000; start += 5_000) {
      await storage.transaction(async (tx) => {
        for (let i = start; i < start + 5_000; i += 1) {
          await tx.orders.insert(orderRecord(String(5_000_000 + i), 'a', i, { status: 'delivered', awb_due_at: null }));
          if (i % 100 === 0) await tx.jobs.schedule({ kind: 'step', key: String(5_000_000 + i), client_id: 'a', due_at: i + 1 });
        }
      });
    }
    await storage.close();
    const reopened = await EmbeddedStorage.open({ path: current, requestLogSize: 10 });
    expect(await reopened.orders.count()).toBe(100_000);
    expect(reopened.jobsLoaded).toBe(1_000);
    expect(await reopened.jobs.count()).toBe(1_000);
    await reopened.close();
  }, 120_000);
});
