import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { crash } from '../support/store.js';
import { tempDir } from '../support/tmp.js';

describe('the journal segments', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const segments = () =>
    readdirSync(dir())
      .filter((name) => /\.wal\.\d+$/.test(name))
      .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
      .map((name) => join(dir(), name));

  it('start a new segment before one would pass the size bound, with no checkpoint (mode 0600)', async () => {
    const store = await JournaledFile.open({ path: path(), segmentBytes: 2_000, checkpointBytes: 10 ** 9 });
    for (let n = 0; n < 100; n += 1) {
      store.put('orders', String(n), { n, padding: 'x'.repeat(80) });
      store.commit();
    }
    const files = segments();
    expect(files.length).toBeGreaterThan(4);
    for (const file of files) {
      expect(statSync(file).size).toBeLessThanOrEqual(2_000);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.count('orders')).toBe(100);
    await reopened.close();
  });

  it('are replayed in order, so the last change of a record wins across segments', async () => {
    const store = await JournaledFile.open({ path: path(), segmentBytes: 500, checkpointBytes: 10 ** 9 });
    for (let version = 0; version < 30; version += 1) {
      store.put('orders', 'same', { version, padding: 'x'.repeat(60) });
      store.commit();
    }
    store.delete('orders', 'gone');
    store.commit();
    expect(segments().length).toBeGreaterThan(3);
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.get<{ version: number }>('orders', 'same')?.version).toBe(29);
    await reopened.close();
  });

  it('replays only the segments after the data file, and a checkpoint removes those it covers', async () => {
    const store = await JournaledFile.open({ path: path(), segmentBytes: 500, checkpointBytes: 10 ** 9 });
    for (let n = 0; n < 20; n += 1) {
      store.put('orders', String(n), { n, padding: 'x'.repeat(60) });
      store.commit();
    }
    const before = segments();
    await store.checkpoint();
    const after = segments();
    expect(after.filter((file) => before.includes(file) && statSync(file).size > 0)).toEqual([]);
    const { journal_generation: generation } = JSON.parse(readFileSync(path(), 'utf8'));
    expect(after.every((file) => Number(file.split('.').pop()) >= generation)).toBe(true);
    store.put('orders', 'late', { n: -1 });
    store.commit();
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.count('orders')).toBe(21);
    await reopened.close();
  });
});
