import { spawn } from 'node:child_process';
import { existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { nodeFileSystem } from '../../src/store/embedded/file/files.js';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DataFileLocked } from '../../src/store/embedded/file/data-file-locked.js';
import { DataFileLock } from '../../src/store/embedded/file/lock.js';
import type { LockHolder } from '../../src/store/embedded/file/lock-holder.js';
import { pidNamespace, processStart } from '../../src/store/embedded/file/process-identity.js';
import { takeOver } from '../../src/store/embedded/file/takeover.js';
import { JournaledFile } from '../../src/store/embedded/file/journaled-file.js';
import { deadPid } from '../support/store.js';
import { tempDir } from '../support/tmp.js';

/** Every file of a folder with its bytes. */
const contents = (dir: string) => Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')]));

describe('the data-file lock', () => {
  const dir = tempDir();
  const path = () => join(dir(), 'sandbox.json');
  const lockPath = () => `${path()}.lock`;
  const writeLock = (holder: Record<string, unknown>) =>
    writeFileSync(lockPath(), JSON.stringify({ host: hostname(), start: null, since: '2026-01-01T00:00:00.000Z', id: 'old', ...holder }));

  it('records pid, host and start time in <data>.lock, mode 0600, and removes it on close', async () => {
    const store = await JournaledFile.open({ path: path() });
    const holder = JSON.parse(readFileSync(lockPath(), 'utf8'));
    expect(holder).toMatchObject({ pid: process.pid, host: hostname(), start: processStart(process.pid) });
    expect(Date.parse(holder.since)).not.toBeNaN();
    expect(statSync(lockPath()).mode & 0o777).toBe(0o600);
    await store.close();
    expect(existsSync(lockPath())).toBe(false);
  });

  it('refuses a second open of a held file at once, naming the file and the holder, and touches no file', async () => {
    const first = await JournaledFile.open({ path: path() });
    first.put('orders', '1', { v: 1 });
    first.commit();
    await first.checkpoint();
    first.put('orders', '2', { v: 2 });
    first.commit();
    writeFileSync(`${path()}.tmp-${process.pid}`, 'a checkpoint of the first sandbox, being written');
    const before = contents(dir());

    const started = Date.now();
    const second = JournaledFile.open({ path: path() });
    await expect(second).rejects.toThrow(DataFileLocked);
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(
      new RegExp(`${path()} is in use by another sandbox \\(pid ${process.pid} on host ${hostname()}, since \\d{4}-`),
    );
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(contents(dir())).toEqual(before);
    await first.close();
  });

  it('records the data file it locks, and names a lock copied with its folder from a running sandbox as such (a snapshot restored beside it)', async () => {
    const original = await JournaledFile.open({ path: path() });
    original.put('orders', '1', { v: 1 });
    original.commit();
    expect(JSON.parse(readFileSync(lockPath(), 'utf8')).path).toBe(path());
    const copy = join(dir(), 'restored');
    mkdirSync(copy);
    for (const name of readdirSync(dir())) if (name.startsWith('sandbox.json')) writeFileSync(join(copy, name), readFileSync(join(dir(), name)));
    const before = contents(copy);

    await expect(JournaledFile.open({ path: join(copy, 'sandbox.json') })).rejects.toThrow(
      `The data file ${join(copy, 'sandbox.json')} has a lock that names ${path()}, held by a sandbox (pid ${process.pid} on host ${hostname()}, since `,
    );
    await expect(JournaledFile.open({ path: join(copy, 'sandbox.json') })).rejects.toThrow(
      `If this folder is a copy of that one (a backup or a snapshot taken while it ran), delete ${join(copy, 'sandbox.json')}.lock and start again; if it is the same folder mounted at another path, stop that sandbox first.`,
    );
    expect(contents(copy)).toEqual(before);
    rmSync(join(copy, 'sandbox.json.lock'));
    const restored = await JournaledFile.open({ path: join(copy, 'sandbox.json') });
    expect(restored.get('orders', '1')).toEqual({ v: 1 });
    await restored.close();
    await original.close();
  });

  it('says in use, not copied, when the lock that names another path is that path\'s own lock file (one folder reached by two paths)', async () => {
    const original = await JournaledFile.open({ path: path() });
    const other = join(dir(), 'same-folder');
    mkdirSync(other);
    writeFileSync(join(other, 'sandbox.json'), readFileSync(path()));
    linkSync(lockPath(), join(other, 'sandbox.json.lock'));
    await expect(JournaledFile.open({ path: join(other, 'sandbox.json') })).rejects.toThrow(`The data file ${join(other, 'sandbox.json')} is in use by another sandbox (pid ${process.pid}`);
    await original.close();
  });

  it('takes over at once a lock whose holder is gone (a SIGKILL), whatever its age', async () => {
    const dead = deadPid();
    writeLock({ pid: dead, since: '2026-11-30T08:00:00.000Z' });
    const tookOver: LockHolder[] = [];
    const store = await JournaledFile.open({ path: path(), onLockTakenOver: (holder) => tookOver.push(holder) });
    expect(JSON.parse(readFileSync(lockPath(), 'utf8')).pid).toBe(process.pid);
    expect(tookOver).toEqual([expect.objectContaining({ pid: dead, host: hostname(), since: '2026-11-30T08:00:00.000Z' })]);
    await store.close();
    // A start on a lock of its own stopped cleanly (none left) takes over nothing.
    const again = await JournaledFile.open({ path: path(), onLockTakenOver: (holder) => tookOver.push(holder) });
    expect(tookOver).toHaveLength(1);
    await again.close();
  });

  /** A process in the given /proc state letter, or undefined when it is gone. */
  const stateOf = (pid: number): string | undefined => {
    try {
      return /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    } catch {
      return undefined;
    }
  };

  it('takes over at once a lock whose holder was killed and is not reaped yet (a zombie still answers kill(pid, 0))', async () => {
    if (processStart(process.pid) === null) return; // no /proc here
    // `sleep 0.5` ends soon; its parent, by then `sleep 30`, never waits for it: a zombie for 30 s.
    const parent = spawn('bash', ['-c', 'sleep 0.5 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(
        await new Promise<string>((resolve, reject) => {
          parent.once('error', reject);
          parent.stdout.once('data', (data: Buffer) => resolve(data.toString()));
        }),
      );
      const start = processStart(pid);
      for (let i = 0; i < 200 && stateOf(pid) !== 'Z'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(stateOf(pid)).toBe('Z');
      expect(() => process.kill(pid, 0)).not.toThrow();
      writeLock({ pid, start, since: new Date().toISOString() });
      const store = await JournaledFile.open({ path: path() });
      expect(JSON.parse(readFileSync(lockPath(), 'utf8')).pid).toBe(process.pid);
      await store.close();
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('keeps the lock of a holder that is stopped (SIGSTOP): it may be resumed', async () => {
    if (processStart(process.pid) === null) return; // no /proc here
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const pid = holder.pid!;
      const start = processStart(pid);
      holder.kill('SIGSTOP');
      for (let i = 0; i < 100 && stateOf(pid) !== 'T'; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(stateOf(pid)).toBe('T');
      writeLock({ pid, start, since: new Date().toISOString() });
      await expect(JournaledFile.open({ path: path() })).rejects.toThrow(`pid ${pid}`);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('takes over a lock whose pid is alive but belongs to a process started at another time (pid reuse)', async () => {
    if (processStart(process.pid) === null) return; // no /proc: pid reuse cannot be told apart here
    writeLock({ pid: process.ppid, start: 'another-boot:1' });
    const store = await JournaledFile.open({ path: path() });
    expect(JSON.parse(readFileSync(lockPath(), 'utf8')).pid).toBe(process.pid);
    await store.close();
  });

  it('keeps a live holder locked however long it has held the lock (a stalled sandbox is not stale)', async () => {
    writeLock({ pid: process.ppid, start: processStart(process.ppid), since: '2020-01-01T00:00:00.000Z' });
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(`pid ${process.ppid}`);
  });

  it('refuses a holder on another host, telling how to remove the lock if that sandbox is gone', async () => {
    writeLock({ pid: deadPid(), host: 'another-host' });
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(`If no sandbox runs on another-host any more, delete ${lockPath()}`);
  });

  it.each([['text', 'garbage'], ['an empty object', '{}'], ['null', 'null'], ['a pid alone', '{"pid": 5}']])(
    'refuses a lock file a sandbox did not write (%s) saying so, not naming a pid or host it does not have, and leaves it',
    async (_, text) => {
      writeFileSync(lockPath(), text);
      const error = (await JournaledFile.open({ path: path() }).catch((e: unknown) => e)) as Error;
      expect(error).toBeInstanceOf(DataFileLocked);
      expect(error.message).toBe(
        `The lock file ${lockPath()} is not a sandbox's lock (something else wrote it), so the sandbox cannot tell whether the data file ${path()} is in use and leaves it alone. If no sandbox uses it, delete ${lockPath()} and start again.`,
      );
      expect(readFileSync(lockPath(), 'utf8')).toBe(text);
    },
  );

  describe('a holder in another pid namespace of this host (another container given the same hostname)', () => {
    // Both containers are pid 1: the holder's pid says nothing here, so its heartbeat (the lock's mtime) tells.
    const timing = { beatMs: 50, staleMs: 600 };
    const otherNamespace = 'pid:[1]';
    const lockOfOtherContainer = () => writeLock({ pid: 1, start: 'its-boot:1', ns: otherNamespace, since: new Date().toISOString() });

    it('records its own pid namespace in the lock', async () => {
      if (pidNamespace() === null) return; // no /proc here
      const store = await JournaledFile.open({ path: path() });
      expect(JSON.parse(readFileSync(lockPath(), 'utf8')).ns).toMatch(/^pid:\[\d+\]$/);
      await store.close();
    });

    it('is refused while its lock is being refreshed, the message saying it is in another container', async () => {
      if (pidNamespace() === null) return;
      lockOfOtherContainer();
      const beating = spawn(process.execPath, ['-e', `setInterval(() => require('fs').utimesSync(${JSON.stringify(lockPath())}, new Date(), new Date()), 50)`], { stdio: 'ignore' });
      try {
        const before = contents(dir());
        expect(() => DataFileLock.acquire(path(), undefined, timing)).toThrow(/in use by another sandbox \(pid 1 on host .*, in another container, pid namespace or machine: its lock is being kept fresh/);
        expect(Object.keys(contents(dir()))).toEqual(Object.keys(before));
        expect(JSON.parse(readFileSync(lockPath(), 'utf8')).ns).toBe(otherNamespace);
      } finally {
        beating.kill('SIGKILL');
      }
    });

    it('is taken over once no one has refreshed its lock for staleMs (a container restarted after a SIGKILL), and not before', async () => {
      if (pidNamespace() === null) return;
      lockOfOtherContainer();
      const started = performance.now();
      const lock = DataFileLock.acquire(path(), undefined, timing);
      expect(performance.now() - started).toBeGreaterThanOrEqual(timing.staleMs - 60); // watched, at least as long as the holder would take to beat several times
      expect(JSON.parse(readFileSync(lockPath(), 'utf8'))).toMatchObject({ pid: process.pid, ns: pidNamespace() });
      lock.release();
    });

    it('is refused while refreshed even when its refreshes are stamped minutes in the past (its clock is off): only a change counts, not the age', async () => {
      if (pidNamespace() === null) return;
      lockOfOtherContainer();
      const skewed = `setInterval(() => { const t = new Date(Date.now() - 600000 + Math.random() * 1000); require('fs').utimesSync(${JSON.stringify(lockPath())}, t, t); }, 50)`;
      const beating = spawn(process.execPath, ['-e', skewed], { stdio: 'ignore' });
      try {
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect(() => DataFileLock.acquire(path(), undefined, timing)).toThrow(/its lock is being kept fresh/);
      } finally {
        beating.kill('SIGKILL');
      }
    });

    it('watches even a lock last refreshed long ago before taking it over', async () => {
      if (pidNamespace() === null) return;
      lockOfOtherContainer();
      const longAgo = new Date(Date.now() - 60_000);
      utimesSync(lockPath(), longAgo, longAgo);
      const started = performance.now();
      const lock = DataFileLock.acquire(path(), undefined, timing);
      expect(performance.now() - started).toBeGreaterThanOrEqual(timing.staleMs - 60);
      lock.release();
    });
  });

  it('refreshes its lock while it holds it', async () => {
    const store = await JournaledFile.open({ path: path(), lockTiming: { beatMs: 50, staleMs: 600 } });
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(lockPath(), longAgo, longAgo);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(Date.now() - statSync(lockPath()).mtimeMs).toBeLessThan(30_000);
    await store.close();
  });

  it('stops writing once its lock was taken by another sandbox (it stalled past staleMs): changes answer 503, health says why, files untouched', async () => {
    const store = await JournaledFile.open({ path: path(), lockTiming: { beatMs: 50, staleMs: 600 }, checkpointBytes: 1 });
    store.put('orders', '1', { v: 1 });
    store.commit();
    await store.checkpoint();
    // Another sandbox (in another container) judged the lock stale and renamed its own over it.
    const other = { pid: 1, host: hostname(), start: null, ns: 'pid:[1]', since: new Date().toISOString(), id: 'the-new-holder' };
    writeFileSync(lockPath(), JSON.stringify(other));
    const before = contents(dir());
    await new Promise((resolve) => setTimeout(resolve, 300));

    store.put('orders', '2', { v: 2 });
    expect(() => store.commit()).toThrow(expect.objectContaining({ name: 'StoreUnavailable', code: 'ELOCKLOST' }));
    expect(store.get('orders', '2')).toBeUndefined();
    expect(store.health()).toMatchObject({ writable: false, code: 'ELOCKLOST', error: expect.stringContaining('Another sandbox took the lock of the data file') });
    await store.checkpoint();
    await store.close();
    expect(contents(dir())).toEqual(before); // no journal line, no checkpoint, and the new holder's lock stays
  });

  describe('a holder that lost its lock (review findings)', () => {
    const timing = { beatMs: 50, staleMs: 600 };
    /** Another sandbox's lock renamed over this one's, as its take-over does. */
    const takeItOver = (id = 'the-new-holder') => {
      const tmp = `${lockPath()}.tmp-test`;
      writeFileSync(tmp, JSON.stringify({ pid: 1, host: hostname(), start: null, ns: 'pid:[1]', since: new Date().toISOString(), id }));
      renameSync(tmp, lockPath());
    };
    const block = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

    it('lets a checkpoint that was running when the lock went neither replace the data file nor remove journal segments', async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let holding = false;
      const held = { ...nodeFileSystem, fsync: async (fd: number) => (holding && (await gate), nodeFileSystem.fsync(fd)) };
      const store = await JournaledFile.open({ path: path(), lockTiming: timing, fileSystem: held, checkpointBytes: 10_000_000 });
      holding = true;
      for (let i = 0; i < 50; i++) store.put('orders', String(i), { n: i });
      store.commit();
      const checkpoint = store.checkpoint(); // waits at its fsync
      await new Promise((resolve) => setTimeout(resolve, 20));
      takeItOver();
      const untouched = () => Object.fromEntries(Object.entries(contents(dir())).filter(([name]) => !name.includes('.tmp-')));
      const before = untouched();
      const inode = statSync(path()).ino;
      release();
      await checkpoint;
      expect(statSync(path()).ino).toBe(inode);
      expect(contents(dir())).toEqual(before); // its own temporary file removed too
      expect(store.health()).toMatchObject({ writable: false, code: 'ELOCKLOST' });
      await store.close();
      expect(contents(dir())).toEqual(before);
    });

    it('refuses a commit made after a loss that no beat has seen yet (the event loop was blocked)', async () => {
      const store = await JournaledFile.open({ path: path(), lockTiming: timing });
      takeItOver();
      block(120); // no beat runs meanwhile
      const before = contents(dir());
      store.put('orders', '1', { v: 1 });
      expect(() => store.commit()).toThrow(expect.objectContaining({ code: 'ELOCKLOST' }));
      expect(contents(dir())).toEqual(before);
      await store.close();
    });

    it('counts a lock file replaced by one naming the same holder as lost: the inode tells', async () => {
      const store = await JournaledFile.open({ path: path(), lockTiming: timing });
      writeFileSync(`${lockPath()}.copy`, readFileSync(lockPath()));
      renameSync(`${lockPath()}.copy`, lockPath()); // another sandbox's hands made this file, whatever it says
      await new Promise((resolve) => setTimeout(resolve, 200));
      store.put('orders', '1', { v: 1 });
      expect(() => store.commit()).toThrow(expect.objectContaining({ code: 'ELOCKLOST' }));
      await store.close();
    });

    it('refuses the start, writing nothing, when the lock is taken while the start is blocked before its first write', async () => {
      const taker = spawn(process.execPath, ['-e', `setTimeout(() => { const fs = require('fs'); fs.writeFileSync(${JSON.stringify(`${lockPath()}.t`)}, JSON.stringify({ pid: 1, host: ${JSON.stringify(hostname())}, start: null, ns: 'pid:[1]', since: 'now', id: 'other' })); fs.renameSync(${JSON.stringify(`${lockPath()}.t`)}, ${JSON.stringify(lockPath())}); }, 150)`], { stdio: 'ignore' });
      try {
        await expect(JournaledFile.open({ path: path(), lockTiming: timing, onLoad: () => void block(700) })).rejects.toThrow(/Another sandbox took the lock of the data file/);
        expect(readdirSync(dir()).sort()).toEqual(['sandbox.json.lock']);
        expect(JSON.parse(readFileSync(lockPath(), 'utf8')).id).toBe('other');
      } finally {
        taker.kill('SIGKILL');
      }
    });

    it('judges a holder of the same hostname and namespace number but another boot (another machine) by its heartbeat, not its pid', () => {
      if (pidNamespace() === null) return;
      writeLock({ pid: 1, start: 'another-boot-id:4242', ns: pidNamespace(), since: new Date().toISOString(), id: 'live-elsewhere' });
      const beating = spawn(process.execPath, ['-e', `setInterval(() => require('fs').utimesSync(${JSON.stringify(lockPath())}, new Date(), new Date()), 50)`], { stdio: 'ignore' });
      try {
        expect(() => DataFileLock.acquire(path(), undefined, timing)).toThrow(/in another container, pid namespace or machine/);
      } finally {
        beating.kill('SIGKILL');
      }
    });
  });

  it('takes no lock with :memory:', async () => {
    const store = await JournaledFile.open({ path: ':memory:' });
    expect(readdirSync(dir())).toEqual([]);
    await store.close();
  });

  it('releases the lock when the start fails (a corrupt data file)', async () => {
    writeFileSync(path(), '{"orders": {');
    await expect(JournaledFile.open({ path: path() })).rejects.toThrow(/not valid JSON/);
    expect(existsSync(lockPath())).toBe(false);
  });

  describe('take-over of a stale lock by two starters that both judged it stale', () => {
    const starter = (id: string): LockHolder => ({ pid: process.pid, host: hostname(), start: processStart(process.pid), since: new Date().toISOString(), id });
    const stale = (): LockHolder => ({ pid: deadPid(), host: hostname(), start: null, since: '2026-01-01T00:00:00.000Z', id: 'stale' });

    it('lets the second one find the lock changed, leaving the first one holding it', () => {
      const old = stale();
      writeFileSync(lockPath(), JSON.stringify(old));
      expect(takeOver(lockPath(), old, starter('first'))).toBe('taken');
      expect(takeOver(lockPath(), old, starter('second'))).toBe('changed');
      expect(JSON.parse(readFileSync(lockPath(), 'utf8')).id).toBe('first');
    });

    it('makes the second one wait while the first one holds the take-over marker', () => {
      const old = stale();
      writeFileSync(lockPath(), JSON.stringify(old));
      writeFileSync(`${lockPath()}.takeover-stale-0`, JSON.stringify(starter('first')));
      expect(takeOver(lockPath(), old, starter('second'))).toBe('busy');
      expect(JSON.parse(readFileSync(lockPath(), 'utf8')).id).toBe('stale');
    });

    it('passes over a take-over marker whose creator died, so a crash mid take-over never wedges the lock', async () => {
      writeLock({ pid: deadPid(), id: 'stale' });
      writeFileSync(`${lockPath()}.takeover-stale-0`, JSON.stringify({ ...starter('dead'), pid: deadPid() }));
      const store = await JournaledFile.open({ path: path() });
      expect(JSON.parse(readFileSync(lockPath(), 'utf8')).pid).toBe(process.pid);
      expect(readdirSync(dir()).filter((name) => name.includes('takeover'))).toEqual([]);
      await store.close();
    });
  });

  it('lets exactly one of several starters take over a stale lock at once', async () => {
    for (let round = 0; round < 2; round += 1) {
      for (const signal of ['go', 'done']) rmSync(`${path()}.${signal}`, { force: true });
      writeLock({ pid: deadPid(), id: `stale-${round}` });
      const starters = Array.from({ length: 4 }, () => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/lock-starter.ts', path()], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        const ready = new Promise<void>((resolve) => child.stdout.on('data', (c: Buffer) => ((out += c.toString()), out.startsWith('ready') && resolve())));
        // 'close', not 'exit': the last stdout chunk may arrive after the process exited.
        const exited = new Promise<string>((resolve) => child.once('close', () => resolve(out.replace('ready', '').trim())));
        return { ready, exited };
      });
      await Promise.all(starters.map((s) => s.ready));
      writeFileSync(`${path()}.go`, '');
      // The losers give up at once; then the winner may let go.
      let exits = 0;
      const losersDone = new Promise((resolve) => starters.forEach((s) => void s.exited.then(() => ++exits === starters.length - 1 && resolve(0))));
      await Promise.race([losersDone, new Promise((r) => setTimeout(r, 5_000))]);
      writeFileSync(`${path()}.done`, '');
      const outcomes = await Promise.all(starters.map((s) => s.exited));
      expect(outcomes.sort()).toEqual(['DataFileLocked', 'DataFileLocked', 'DataFileLocked', 'won']);
      expect(readdirSync(dir()).filter((name) => name.includes('.lock.'))).toEqual([]); // no take-over marker or temp file left
    }
  }, 60_000);

  it('leaves the temp files of live starters when it tidies up, and removes those of dead ones and stale markers', () => {
    const live = `${lockPath()}.takeover-old-0.tmp-${process.pid}-abc`; // a starter about to link its marker
    const dead = `${lockPath()}.takeover-old-1.tmp-${deadPid()}-def`;
    // A pid not alive here may be a live starter of another pid namespace: its file goes only once it is old.
    const elsewhere = `${lockPath()}.tmp-${deadPid()}-fresh`;
    const marker = `${lockPath()}.takeover-old-2`;
    for (const file of [live, dead, elsewhere, marker]) writeFileSync(file, '{}');
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(dead, longAgo, longAgo);
    const lock = DataFileLock.acquire(path());
    expect(existsSync(live)).toBe(true);
    expect(existsSync(elsewhere)).toBe(true);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    lock.release();
  });

  it('on a full disk, throws naming the lock file and the error, and leaves no temp file', () => {
    const full = { writeSync: () => { throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }); } };
    expect(() => DataFileLock.acquire(path(), full)).toThrow(
      new RegExp(`^Cannot write the lock file ${lockPath()} \\(ENOSPC: no space left on device, write, writing ${lockPath()}\\.tmp-${process.pid}-\\w+\\); nothing was left behind`),
    );
    expect(readdirSync(dir())).toEqual([]);
    // A stale lock to take over: the same, its marker gone too.
    writeLock({ pid: deadPid() });
    const before = contents(dir());
    expect(() => DataFileLock.acquire(path(), full)).toThrow(/Cannot write the lock file .*ENOSPC/);
    expect(contents(dir())).toEqual(before);
  });

  it('DataFileLock.acquire and release work on their own', () => {
    const lock = DataFileLock.acquire(path());
    expect(() => DataFileLock.acquire(path())).toThrow(DataFileLocked);
    lock.release();
    DataFileLock.acquire(path()).release();
    expect(existsSync(lockPath())).toBe(false);
  });

  describe('a data file reached through a link', () => {
    const real = () => join(dir(), 'real.json');
    const link = () => join(dir(), 'link.json');

    it('refuses a second sandbox on a symbolic link to a held data file, naming the real file, and touches no file', async () => {
      symlinkSync('real.json', link());
      const first = await JournaledFile.open({ path: real() });
      first.put('orders', '1', { v: 1 });
      first.commit();
      const before = contents(dir());
      await expect(JournaledFile.open({ path: link() })).rejects.toThrow(`The data file ${real()} is in use by another sandbox`);
      expect(contents(dir())).toEqual(before);
      await first.close();
    });

    it('refuses a sandbox on the real file while one runs on a symbolic link to it', async () => {
      symlinkSync('real.json', link());
      const first = await JournaledFile.open({ path: link() });
      await expect(JournaledFile.open({ path: real() })).rejects.toThrow(DataFileLocked);
      await first.close();
    });

    it('writes through a symbolic link: the journal and the checkpoint are the real file\'s, and the link stays a link', async () => {
      mkdirSync(join(dir(), 'elsewhere'));
      const target = join(dir(), 'elsewhere', 'real.json');
      symlinkSync(target, link()); // the target does not exist yet
      const store = await JournaledFile.open({ path: link() });
      store.put('orders', '1', { v: 1 });
      store.commit();
      expect(existsSync(`${target}.lock`)).toBe(true);
      expect(readdirSync(join(dir(), 'elsewhere')).some((name) => name.startsWith('real.json.wal.'))).toBe(true);
      await store.checkpoint();
      store.put('orders', '2', { v: 2 });
      store.commit();
      await store.close();
      expect(lstatSync(link()).isSymbolicLink()).toBe(true);
      expect(readdirSync(dir()).sort()).toEqual(['elsewhere', 'link.json']);
      const again = await JournaledFile.open({ path: target });
      expect(again.values('orders')).toEqual([{ v: 1 }, { v: 2 }]);
      await again.close();
    });

    it('refuses a data file with another hard link, naming both, and touches no file', async () => {
      const first = await JournaledFile.open({ path: real() });
      first.put('orders', '1', { v: 1 });
      first.commit();
      await first.checkpoint();
      linkSync(real(), link());
      const before = contents(dir());
      await expect(JournaledFile.open({ path: link() })).rejects.toThrow(`The data file ${link()} has 2 hard links`);
      expect(contents(dir())).toEqual(before);
      await first.close();
      await expect(JournaledFile.open({ path: real() })).rejects.toThrow(/2 hard links: a sandbox started on another of its names/);
      rmSync(link());
      const again = await JournaledFile.open({ path: real() });
      expect(again.get('orders', '1')).toEqual({ v: 1 });
      await again.close();
    });
  });
});
