import { copyFileSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { StoreUnavailable } from '../../src/store/embedded/file/types.js';
import { FaultyFileSystem } from '../support/faulty-fs.js';
import { crash } from '../support/store.js';
import { tempDir } from '../support/tmp.js';

const order = (n: number) => ({ order_no: String(n), padding: 'x'.repeat(200) });

describe('JournaledFile when the disk fails', () => {
  const dir = tempDir();
  const copies = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const segments = () => readdirSync(dir()).filter((name) => name.includes('.wal.')).map((name) => join(dir(), name));
  const journalText = () => segments().map((s) => readFileSync(s, 'utf8')).join('');

  it('throws StoreUnavailable with the errno code and rolls the commit back: its records do not exist', async () => {
    const fs = new FaultyFileSystem();
    const store = await JournaledFile.open({ path: path(), fileSystem: fs });
    store.put('orders', '1', order(1));
    store.put('meta', 'counter', 1);
    store.commit();

    fs.failing = 'ENOSPC';
    store.put('orders', '2', order(2));
    store.put('orders', '1', { ...order(1), changed: true });
    store.put('meta', 'counter', 2);
    store.delete('orders', '1');
    expect(() => store.commit()).toThrow(StoreUnavailable);
    expect(store.get('orders', '2')).toBeUndefined();
    expect(store.get('orders', '1')).toEqual(order(1));
    expect(store.get('meta', 'counter')).toBe(1);
    expect(store.count('orders')).toBe(1);

    store.put('orders', '3', order(3));
    const error = (() => {
      try {
        store.commit();
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(StoreUnavailable);
    expect((error as StoreUnavailable).code).toBe('ENOSPC');
    fs.failing = undefined;
    await store.close();
  });

  it('cuts the journal back to its last complete line, so nothing follows a torn line', async () => {
    const fs = new FaultyFileSystem();
    const store = await JournaledFile.open({ path: path(), fileSystem: fs });
    store.put('orders', '1', order(1));
    store.commit();
    const before = journalText();
    fs.failing = 'ENOSPC';
    store.put('orders', '2', order(2));
    expect(() => store.commit()).toThrow(StoreUnavailable);
    expect(journalText()).toBe(before); // the half-written line is gone
    fs.failing = undefined;
    store.put('orders', '3', order(3));
    store.commit();
    expect(journalText().split('\n').filter(Boolean).map((line) => JSON.parse(line))).toHaveLength(2);
    await store.close();
  });

  it('when even cutting back fails, refuses every commit until the cut works, then carries on', async () => {
    const fs = new FaultyFileSystem();
    const store = await JournaledFile.open({ path: path(), fileSystem: fs });
    fs.failing = 'EIO';
    fs.truncateFails = true;
    store.put('orders', '1', order(1));
    expect(() => store.commit()).toThrow(StoreUnavailable);
    fs.failing = undefined; // the disk takes writes again, but the torn tail is still there
    store.put('orders', '2', order(2));
    expect(() => store.commit()).toThrow(/EIO/);
    fs.truncateFails = false;
    store.put('orders', '3', order(3));
    store.commit();
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.values<{ order_no: string }>('orders').map((o) => o.order_no)).toEqual(['3']);
    await reopened.close();
  });

  it('reports itself not writable from the failure until the next write succeeds, without a restart', async () => {
    const fs = new FaultyFileSystem();
    const store = await JournaledFile.open({ path: path(), fileSystem: fs });
    expect(store.health()).toEqual({ writable: true });
    fs.failing = 'ENOSPC';
    store.put('orders', '1', order(1));
    expect(() => store.commit()).toThrow(StoreUnavailable);
    expect(store.health()).toEqual({ writable: false, code: 'ENOSPC', error: expect.stringContaining('ENOSPC'), since: expect.any(Number) });
    fs.failing = undefined;
    store.put('orders', '1', order(1));
    store.commit();
    expect(store.health()).toEqual({ writable: true });
    await store.close();
  });

  it('takes writes again after a large line failed once space returns, at the next checkpoint that rewrites the data file', async () => {
    const fs = new FaultyFileSystem();
    const store = await JournaledFile.open({ path: path(), fileSystem: fs });
    fs.failingAbove = 10_000;
    store.put('orders', 'big', { order_no: 'big', padding: 'x'.repeat(50_000) }); // a reset or a bulk create, not made again
    expect(() => store.commit()).toThrow(StoreUnavailable);
    fs.failingAbove = undefined;
    store.put('orders', '1', order(1));
    store.commit();
    expect(store.health()).toMatchObject({ writable: false, code: 'ENOSPC' });
    await store.checkpoint();
    expect(store.health()).toEqual({ writable: true });
    await store.close();
  });

  it('on a disk all but full, stays not writable while short lines go through and longer ones fail, until a line as long is written', async () => {
    const fs = new FaultyFileSystem();
    const store = await JournaledFile.open({ path: path(), fileSystem: fs });
    fs.failingAbove = 100;
    store.put('orders', '1', order(1)); // a line of about 250 bytes
    expect(() => store.commit()).toThrow(StoreUnavailable);
    store.put('meta', 'clock', 1); // a short line, such as a clock's save
    store.commit();
    expect(store.get('meta', 'clock')).toBe(1);
    expect(store.health()).toMatchObject({ writable: false, code: 'ENOSPC' });
    fs.failingAbove = undefined;
    store.put('meta', 'clock', 2);
    store.commit();
    expect(store.health()).toMatchObject({ writable: false, code: 'ENOSPC' });
    store.put('orders', '1', order(1));
    store.commit();
    expect(store.health()).toEqual({ writable: true });
    await store.close();
  });

  it('keeps exactly the acknowledged records when the disk fills and frees under load, across a crash (SIGKILL-style reopen)', async () => {
    const fs = new FaultyFileSystem();
    const store = await JournaledFile.open({ path: path(), fileSystem: fs, segmentBytes: 4_096 });
    const acknowledged = new Set<string>();
    for (let n = 0; n < 300; n += 1) {
      fs.failing = n % 50 >= 30 ? 'ENOSPC' : undefined; // 20 of every 50 commits hit a full disk
      const batch = [n * 3, n * 3 + 1, n * 3 + 2].map(String);
      for (const key of batch) store.put('orders', key, order(Number(key)));
      try {
        store.commit();
        batch.forEach((key) => acknowledged.add(key));
      } catch (error) {
        expect(error).toBeInstanceOf(StoreUnavailable);
      }
    }
    expect(fs.failures).toBeGreaterThan(0);
    expect(new Set(Object.keys(Object.fromEntries(store.values<{ order_no: string }>('orders').map((o) => [o.order_no, o]))))).toEqual(acknowledged);
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(new Set(reopened.values<{ order_no: string }>('orders').map((o) => o.order_no))).toEqual(acknowledged);
    await reopened.close();
  });

  it('starts on a journal whose last line was torn by a full disk and a crash before the cut', async () => {
    const fs = new FaultyFileSystem();
    const store = await JournaledFile.open({ path: path(), fileSystem: fs });
    store.put('orders', '1', order(1));
    store.commit();
    fs.failing = 'ENOSPC';
    fs.truncateFails = true;
    store.put('orders', '2', order(2));
    expect(() => store.commit()).toThrow(StoreUnavailable);
    expect(journalText().endsWith('\n')).toBe(false); // torn, as the crash leaves it
    crash(path());
    const reopened = await JournaledFile.open({ path: path() });
    expect(reopened.values<{ order_no: string }>('orders').map((o) => o.order_no)).toEqual(['1']);
    reopened.put('orders', '3', order(3));
    reopened.commit();
    crash(path());
    const again = await JournaledFile.open({ path: path() });
    expect(again.values<{ order_no: string }>('orders').map((o) => o.order_no).sort()).toEqual(['1', '3']);
    await again.close();
  });

  it('leaves the old data file and the journal when a checkpoint fails, removes its temp file, and retries later', async () => {
    const fs = new FaultyFileSystem();
    const errors: Error[] = [];
    const store = await JournaledFile.open({ path: path(), fileSystem: fs, checkpointBytes: 2_000, checkpointRetryMs: 300, onError: (e) => errors.push(e) });
    store.put('orders', '0', order(0));
    store.commit();
    await store.checkpoint();
    const dataFile = readFileSync(path(), 'utf8');

    // Fail only the checkpoint's writes: the journal's appends go through writeSync.
    const write = fs.write.bind(fs);
    let checkpointFails = true;
    fs.write = (fd, buffer, offset, length) => (checkpointFails ? Promise.reject(Object.assign(new Error('ENOSPC: injected'), { code: 'ENOSPC' })) : write(fd, buffer, offset, length));
    for (let n = 1; n <= 20; n += 1) {
      store.put('orders', String(n), order(n));
      store.commit(); // passes 2,000 bytes: a checkpoint starts by itself, and fails
    }
    await vi.waitFor(() => expect(errors).toHaveLength(1), { timeout: 10_000 });
    // The log line it makes says which file, that nothing is lost, and when it tries again.
    expect(errors[0]!.message).toMatch(/^The checkpoint could not rewrite \S+sandbox\.json \(ENOSPC: injected\): nothing is lost, every change is in the journal beside it \(replayed at the next start\); the next checkpoint tries again in 300ms\.$/);
    expect(errors[0]).toMatchObject({ code: 'ENOSPC' });
    expect(store.health()).toEqual({ writable: true, checkpointError: expect.stringContaining('ENOSPC') });
    expect(readFileSync(path(), 'utf8')).toBe(dataFile);
    expect(readdirSync(dir()).filter((name) => name.includes('.tmp-'))).toEqual([]);
    for (let n = 21; n <= 30; n += 1) {
      store.put('orders', String(n), order(n));
      store.commit(); // within the retry wait: no new attempt, not one per commit
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(errors).toHaveLength(1);

    // A crash now would lose nothing: the old file plus the journal hold everything. (Read from a copy of the
    // files: a second store taking this one's lock over would fence it, as it must.)
    const copy = join(copies(), 'sandbox.json');
    for (const name of readdirSync(dir()).filter((n) => !n.endsWith('.lock'))) copyFileSync(join(dir(), name), join(copies(), name));
    const afterCrash = await JournaledFile.open({ path: copy });
    expect(afterCrash.count('orders')).toBe(31);
    await afterCrash.close();

    checkpointFails = false;
    await new Promise((r) => setTimeout(r, 350));
    store.put('orders', '31', order(31));
    store.commit(); // past the wait: the next checkpoint starts, and works
    await vi.waitFor(() => expect(store.health().checkpointError).toBeUndefined(), { timeout: 10_000 });
    expect(Object.keys(JSON.parse(readFileSync(path(), 'utf8')).orders).length).toBeGreaterThanOrEqual(31);
    expect(statSync(path()).mode & 0o777).toBe(0o600);
  });
});
