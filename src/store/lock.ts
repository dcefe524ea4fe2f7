import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { describeError, nodeFileSystem, writeAllSync } from './files.js';
import { DataFileError, type StoreFileSystem } from './types.js';

/** The writes a lock makes: the seam where tests inject ENOSPC. */
type LockWrites = Pick<StoreFileSystem, 'writeSync'>;

/** Who holds a data file, as its lock file `<data>.lock` records it. */
export interface LockHolder {
  pid: number;
  host: string;
  /** The holder's process start time (Linux: boot id and start ticks), telling a reused pid apart; null where unknown. */
  start: string | null;
  /** When the lock was taken, ISO 8601. */
  since: string;
  /** Unique per acquisition: a take-over replaces exactly the lock it judged stale. */
  id: string;
}

/** A second sandbox started on a data file that a live sandbox holds. */
export class DataFileLocked extends Error {
  override name = 'DataFileLocked';
  constructor(
    readonly path: string,
    readonly holder: LockHolder,
  ) {
    const local = holder.host === hostname();
    super(
      `The data file ${path} is in use by another sandbox (pid ${holder.pid} on host ${holder.host}, since ${holder.since}). ` +
        (local
          ? 'Stop that sandbox first, or start this one with another --data file (or --data :memory:).'
          : `Stop it first, or start with another --data file. If no sandbox runs on ${holder.host} any more, delete ${path}.lock ` +
            '(in Docker, give the container a fixed --hostname so that a recreated container recognises its own lock).'),
    );
  }
}

/**
 * The start time of a live process, or null where it cannot be read (no /proc).
 * Field 22 of /proc/PID/stat counts clock ticks since boot; with the boot id it names
 * one process for good, so a pid reused after a crash is not mistaken for the holder.
 */
export function processStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ticks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return `${bootId()}:${ticks}`;
  } catch {
    return null;
  }
}

let cachedBootId: string | undefined;
function bootId(): string {
  cachedBootId ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  return cachedBootId;
}

/**
 * Whether the process has ended and waits to be reaped: its main thread in state Z (or X)
 * with no other thread left (/proc/PID/status). A sandbox killed with SIGKILL stays such
 * a zombie until its parent waits for it (a shell or a process manager slow to reap): it
 * has closed its files and never writes again, but it still answers `kill(pid, 0)`. A
 * main thread in state Z beside threads still running is a process still alive (Node's
 * never ends that way, but the lock does not rely on it). False where /proc cannot be read.
 */
export function processEnded(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1]);
    return (state === 'Z' || state === 'X') && threads <= 1;
  } catch {
    return false;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

/**
 * Whether the holder is certainly gone: on this host, and its pid is not alive, has
 * ended and waits to be reaped (a zombie), or is alive with another start time (pid
 * reuse). A holder on another host cannot be checked and counts as live. A holder that
 * merely stalls stays live: no timeout.
 */
export function isStale(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  if (!pidAlive(holder.pid) || processEnded(holder.pid)) return true;
  if (holder.start === null) return false;
  const start = processStart(holder.pid);
  return start !== null && start !== holder.start;
}

const TAKEOVER_WAIT_MS = 20;
const MAX_ATTEMPTS = 500; // 10 s of waiting on another starter's take-over

/**
 * An exclusive lock on a data file: the file `<data>.lock` (mode 0600), created with
 * link(2) so it appears atomically with its whole content.
 *
 * A stale lock (see `isStale`) is taken over without a race: the starters that judged
 * it stale compete for a marker `<data>.lock.takeover-<id>-<n>` created with link(2);
 * the one that creates it checks that the lock still names the stale holder and
 * renames its own lock over it. A marker whose creator died is passed over by trying
 * `n + 1`, so a crash mid take-over never wedges the lock. See
 * docs/decisions/0001-journaled-store.md.
 *
 * @example
 * const lock = DataFileLock.acquire('/data/sandbox.json'); // throws DataFileLocked
 * lock.release();
 */
export class DataFileLock {
  private constructor(
    readonly path: string,
    readonly holder: LockHolder,
  ) {}

  /**
   * Takes the lock of the data file at `dataPath`, or throws DataFileLocked naming the
   * holder. Touches no file when it throws: a lock that cannot be written (a full disk)
   * throws a DataFileError naming it, its temporary file removed.
   */
  static acquire(dataPath: string, fs: LockWrites = nodeFileSystem): DataFileLock {
    const path = `${dataPath}.lock`;
    const me: LockHolder = {
      pid: process.pid,
      host: hostname(),
      start: processStart(process.pid),
      since: new Date().toISOString(),
      id: randomBytes(8).toString('hex'),
    };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const current = readHolder(path);
      if (current === undefined) {
        if (createExclusive(path, me, fs)) return new DataFileLock(path, me).tidied();
        continue;
      }
      if (!isStale(current)) throw new DataFileLocked(dataPath, current);
      const outcome = takeOver(path, current, me, fs);
      if (outcome === 'taken') return new DataFileLock(path, me).tidied();
      if (outcome === 'busy') sleep(TAKEOVER_WAIT_MS);
    }
    const holder = readHolder(path);
    if (holder) throw new DataFileLocked(dataPath, holder);
    throw new Error(`Could not take the lock ${path}: another sandbox keeps taking it over. Try again.`);
  }

  /** Removes the lock file if it is still this process's. Safe to call twice. */
  release(): void {
    if (readHolder(this.path)?.id === this.holder.id) rmSync(this.path, { force: true });
  }

  /** Removes take-over markers and temporary lock files that no live starter needs any more. */
  private tidied(): this {
    const dir = dirname(this.path);
    const prefix = `${basename(this.path)}.`;
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix)) continue;
      const rest = name.slice(prefix.length);
      // A temp file (of a lock, or of a marker: `takeover-<id>-<n>.tmp-<pid>-<id>`) belongs to
      // its starter while that one lives: removing it would fail the starter's link(2) with
      // ENOENT instead of letting it find this lock. Markers name a lock id that is gone now.
      const pid = Number(/(?:^|\.)tmp-(\d+)-/.exec(rest)?.[1] ?? 0);
      const stale = pid > 0 ? !pidAlive(pid) : rest.startsWith('takeover-');
      if (stale) rmSync(join(dir, name), { force: true });
    }
    return this;
  }
}

/** The holder recorded in the lock file, or undefined when there is none (or it vanished meanwhile). */
function readHolder(path: string): LockHolder | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as LockHolder;
  } catch {
    // Written by something else than a sandbox (link(2) never shows a half-written lock): never guess it stale.
    return { pid: 0, host: 'unknown (the lock file is not a sandbox lock)', start: null, since: 'unknown', id: '' };
  }
}

/** Writes `holder` to a private temporary file; the caller links or renames it into place. A failed write removes it. */
function writeTemp(path: string, holder: LockHolder, fs: LockWrites): string {
  const tmp = `${path}.tmp-${process.pid}-${holder.id}`;
  let fd: number;
  try {
    fd = openSync(tmp, 'wx', 0o600);
  } catch (error) {
    throw cannotWrite(path, tmp, error);
  }
  try {
    writeAllSync(fs, fd, Buffer.from(`${JSON.stringify(holder)}\n`));
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw cannotWrite(path, tmp, error);
  }
  closeSync(fd);
  return tmp;
}

const cannotWrite = (path: string, file: string, error: unknown) =>
  new DataFileError(`Cannot write the lock file ${path} (${describeError(error)}, writing ${file}); nothing was left behind. Free some space and start again.`, {
    cause: error,
  });

/** Creates the lock with link(2): fails, returning false, when a lock exists. */
function createExclusive(path: string, holder: LockHolder, fs: LockWrites): boolean {
  const tmp = writeTemp(path, holder, fs);
  try {
    linkSync(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw cannotWrite(path, path, error);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Replaces the stale lock `stale` with `me`. 'taken' when done; 'changed' when the lock
 * no longer names `stale` (start over); 'busy' while a live starter takes it over.
 * Exported for the tests of the race between two starters.
 */
export function takeOver(path: string, stale: LockHolder, me: LockHolder, fs: LockWrites = nodeFileSystem): 'taken' | 'changed' | 'busy' {
  for (let n = 0; ; n += 1) {
    const marker = `${path}.takeover-${stale.id}-${n}`;
    if (!createExclusive(marker, me, fs)) {
      const creator = readHolder(marker);
      if (creator !== undefined && isStale(creator)) continue; // its creator died mid take-over: pass it over
      return 'busy';
    }
    // Holding the marker, no one else can replace the stale lock: check it is still there, then replace it.
    try {
      if (readHolder(path)?.id !== stale.id) return 'changed';
      const tmp = writeTemp(path, me, fs);
      try {
        renameSync(tmp, path);
      } catch (error) {
        rmSync(tmp, { force: true });
        throw cannotWrite(path, path, error);
      }
      return 'taken';
    } finally {
      rmSync(marker, { force: true });
    }
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
