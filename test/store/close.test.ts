import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { tempDir } from '../support/tmp.js';

/** An order-sized record (~1 KB, as src/records/order.ts's Order is on disk). */
const record = (n: number) => ({ order_no: String(100000000000 + n), client_id: 'c', status: 'delivered', address: 'Jl. Sudirman No. 1 '.repeat(20), history: [{ step: 0, at: n }, { step: 1, at: n + 1 }], n });

describe('closing the store', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const segments = () => readdirSync(dir()).filter((name) => name.includes('.wal.'));

  it('leaves one readable data file and an empty journal when the store is small', async () => {
    const store = await JournaledFile.open({ path: path() });
    for (let n = 0; n < 100; n += 1) store.put('orders', String(n), record(n));
    store.commit();
    await store.close();
    expect(Object.keys(JSON.parse(readFileSync(path(), 'utf8')).orders)).toHaveLength(100);
    expect(segments().map((name) => statSync(join(dir(), name)).size)).toEqual([0]);
  });

  it('holding 300k orders, finishes within 5 s: the journal is fsynced, the data file not rewritten, the lock released', async () => {
    const store = await JournaledFile.open({ path: path(), checkpointBytes: 10 ** 12 });
    for (let batch = 0; batch < 300; batch += 1) {
      for (let n = batch * 1000; n < (batch + 1) * 1000; n += 1) store.put('orders', String(n), record(n));
      store.commit();
    }
    await store.checkpoint(); // a data file of ~300 MB
    const dataFile = statSync(path());
    store.put('orders', 'last', record(-1));
    store.commit();

    const started = Date.now();
    await store.close();
    const took = Date.now() - started;
    console.log(`close of 300k orders: ${took} ms`);
    expect(took).toBeLessThan(5_000);
    expect(statSync(path()).mtimeMs).toBe(dataFile.mtimeMs);
    expect(existsSync(`${path()}.lock`)).toBe(false);
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.count('orders')).toBe(300_001);
    await reopened.close();
  }, 120_000);

  it('stops a checkpoint running in the background rather than wait for it, leaving no temp file', async () => {
    const store = await JournaledFile.open({ path: path(), closeCheckpointBytes: 0 });
    for (let n = 0; n < 30_000; n += 1) store.put('orders', String(n), record(n));
    store.commit();
    const running = store.checkpoint();
    await new Promise((r) => setImmediate(r));
    await store.close();
    await running;
    // The checkpoint never finished: the data file is still the one a new store writes at once.
    expect(JSON.parse(readFileSync(path(), 'utf8')).orders).toEqual({});
    expect(readdirSync(dir()).filter((name) => name.includes('.tmp-'))).toEqual([]);
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.count('orders')).toBe(30_000);
    await reopened.close();
  });
});
