import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { tempDir } from '../support/tmp.js';

// The lock's refreshes (utimes) fail while `refreshFails` says so: a file system that takes none, or a disk error.
// Opening the lock file fails while `openFails` names an errno (EMFILE: the process is out of file descriptors);
// looking it up (stat) fails while `statFails` says so (a disk error); opening a descriptor on it fails while `openSyncFails` says so.
const fault = vi.hoisted(() => ({ refreshFails: false, code: 'EIO', openFails: undefined as string | undefined, statFails: false, openSyncFails: false }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const utimesSync: typeof fs.utimesSync = (...args) => {
    if (fault.refreshFails) throw Object.assign(new Error(`${fault.code}: refused, utime`), { code: fault.code });
    return fs.utimesSync(...args);
  };
  const readFileSync = ((path: Parameters<typeof fs.readFileSync>[0], ...rest: unknown[]) => {
    if (fault.openFails !== undefined && String(path).endsWith('.lock')) throw Object.assign(new Error(`${fault.openFails}: too many open files, open '${String(path)}'`), { code: fault.openFails });
    return (fs.readFileSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.readFileSync;
  const statSync = ((path: Parameters<typeof fs.statSync>[0], ...rest: unknown[]) => {
    if (fault.statFails && String(path).endsWith('.lock')) throw Object.assign(new Error(`EIO: i/o error, stat '${String(path)}'`), { code: 'EIO' });
    return (fs.statSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.statSync;
  const openSync = ((path: Parameters<typeof fs.openSync>[0], ...rest: unknown[]) => {
    if (fault.openSyncFails && String(path).endsWith('.lock')) throw Object.assign(new Error(`EMFILE: too many open files, open '${String(path)}'`), { code: 'EMFILE' });
    return (fs.openSync as (...args: unknown[]) => unknown)(path, ...rest);
  }) as typeof fs.openSync;
  return { ...fs, default: { ...fs, utimesSync, readFileSync, statSync, openSync }, utimesSync, readFileSync, statSync, openSync };
});

const timing = { beatMs: 50, staleMs: 300 };
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const block = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

describe('refreshing the data-file lock when the file system refuses it', () => {
  const dir = tempDir();
  afterEach(() => {
    fault.refreshFails = false;
    fault.code = 'EIO';
    fault.openFails = undefined;
    fault.statFails = false;
    fault.openSyncFails = false;
  });

  it('keeps its lock while the process is out of file descriptors for seconds (a flood of connections), and writes once they are free', async () => {
    const store = await JournaledFile.open({ path: join(dir(), 'sandbox.json'), lockTiming: timing });
    await wait(120);
    fault.openFails = 'EMFILE';
    await wait(600); // twice staleMs: every check in between could not open the lock
    fault.openFails = undefined;
    store.put('orders', '1', { v: 1 });
    expect(() => store.commit()).not.toThrow();
    expect(store.health().writable).toBe(true);
    await store.close();
  });

  it('leaves no lock behind when it cannot open the one it just made (no file descriptor left at start): a later start takes it', async () => {
    const path = join(dir(), 'sandbox.json');
    fault.openSyncFails = true;
    await expect(JournaledFile.open({ path, lockTiming: timing })).rejects.toThrow(/EMFILE/);
    fault.openSyncFails = false;
    expect(existsSync(`${path}.lock`)).toBe(false);
    const store = await JournaledFile.open({ path, lockTiming: timing });
    await store.close();
  });

  it('loses its lock when it is replaced while the process is out of file descriptors (a new file, however its inode is numbered)', async () => {
    const path = join(dir(), 'sandbox.json');
    const store = await JournaledFile.open({ path, lockTiming: timing });
    // The holder keeps its lock file open, so its inode is not freed, and a new file cannot be given its number.
    const openFiles = () => readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`); } catch { return ''; } });
    if (existsSync('/proc/self/fd')) expect(openFiles()).toContain(`${path}.lock`);
    await wait(120);
    const other = readFileSync(`${path}.lock`, 'utf8').replace(/"id":"[0-9a-f]+"/, '"id":"bbbbbbbbbbbbbbbb"');
    fault.openFails = 'EMFILE';
    // Removed and made anew, as a starter told the holder is gone would: a file system may give it the freed inode's number.
    rmSync(`${path}.lock`);
    writeFileSync(`${path}.lock`, other);
    await wait(120);
    fault.openFails = undefined;
    store.put('orders', '1', { v: 1 });
    expect(() => store.commit()).toThrow(expect.objectContaining({ code: 'ELOCKLOST' }));
    // Taken, though whom the new lock names could not be read at the time.
    expect(store.health()).toMatchObject({ error: expect.stringContaining('Another sandbox took the lock of the data file') });
    await store.close();
  });

  it('still stops writing when its lock cannot be looked up for seconds for any other reason', async () => {
    const store = await JournaledFile.open({ path: join(dir(), 'sandbox.json'), lockTiming: timing });
    await wait(120);
    fault.statFails = true;
    await wait(600);
    fault.statFails = false;
    store.put('orders', '1', { v: 1 });
    expect(() => store.commit()).toThrow(expect.objectContaining({ code: 'ELOCKLOST' }));
    expect(store.health()).toMatchObject({ writable: false, code: 'ELOCKLOST' });
    await store.close();
  });

  it('on a file system that refuses to set a file\'s times, says so once and keeps writing', async () => {
    fault.refreshFails = true;
    fault.code = 'EPERM';
    const errors: Error[] = [];
    const store = await JournaledFile.open({ path: join(dir(), 'sandbox.json'), lockTiming: timing, onError: (e) => errors.push(e) });
    await wait(500);
    store.put('orders', '1', { v: 1 });
    expect(() => store.commit()).not.toThrow();
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('cannot be refreshed on this file system (EPERM')]);
    await store.close();
  });

  it('stops writing when refreshes fail beat after beat from the start (a disk error, not a file system without times), and says nothing of the file system after one failure', async () => {
    fault.refreshFails = true;
    const errors: Error[] = [];
    const store = await JournaledFile.open({ path: join(dir(), 'sandbox.json'), lockTiming: timing, onError: (e) => errors.push(e) });
    await wait(80); // one failed beat
    expect(errors).toEqual([]);
    await wait(400);
    store.put('orders', '1', { v: 1 });
    expect(() => store.commit()).toThrow(expect.objectContaining({ code: 'ELOCKLOST' }));
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('could not be refreshed for seconds')]);
    await store.close();
  });

  it('keeps writing after one failed refresh, even one that follows a long stall', async () => {
    const store = await JournaledFile.open({ path: join(dir(), 'sandbox.json'), lockTiming: timing });
    await wait(120); // refreshes work
    block(500); // longer than staleMs: no beat ran
    fault.refreshFails = true;
    await wait(60); // one beat, failing
    fault.refreshFails = false;
    await wait(200);
    store.put('orders', '1', { v: 1 });
    expect(() => store.commit()).not.toThrow();
    expect(store.health().writable).toBe(true);
    await store.close();
  });

  it('stops writing once refreshes that worked fail beat after beat (another starter may judge the lock stale), saying so', async () => {
    const store = await JournaledFile.open({ path: join(dir(), 'sandbox.json'), lockTiming: timing });
    await wait(120);
    fault.refreshFails = true;
    await wait(450);
    store.put('orders', '1', { v: 1 });
    expect(() => store.commit()).toThrow(expect.objectContaining({ code: 'ELOCKLOST' }));
    expect(store.health()).toMatchObject({ writable: false, code: 'ELOCKLOST', error: expect.stringContaining('could not be refreshed for seconds') });
    await store.close();
  });
});
