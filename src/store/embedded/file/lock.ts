import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, linkSync, openSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
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
  /**
   * The holder's pid namespace (Linux: `pid:[inode]`); null where unknown, absent in locks
   * of earlier sandboxes. A holder in another one (another container with the same
   * hostname) cannot be checked by its pid: its heartbeat tells instead.
   */
  ns?: string | null;
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
    const elsewhere = local && !pidCheckable(holder);
    super(
      `The data file ${path} is in use by another sandbox (pid ${holder.pid} on host ${holder.host}` +
        (elsewhere ? ', in another container, pid namespace or machine: its lock is being kept fresh' : '') +
        `, since ${holder.since}). ` +
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
let cachedNamespace: string | null | undefined;

/** This process's pid namespace (`pid:[inode]`), or null where it cannot be read (no /proc). */
export function pidNamespace(): string | null {
  if (cachedNamespace === undefined) {
    try {
      cachedNamespace = readlinkSync('/proc/self/ns/pid');
    } catch {
      cachedNamespace = null;
    }
  }
  return cachedNamespace;
}

/**
 * Whether the holder's pid can be checked from here: it is on this host, in this pid
 * namespace and this boot. A holder in another pid namespace (another container given
 * the same hostname: both are pid 1; this container before a restart) or on another
 * machine of the same hostname (its namespaces have the same numbers; its boot id
 * differs) cannot be: its heartbeat tells instead. A lock that recorded no namespace (an
 * earlier sandbox's, or no /proc) is judged by its pid as before.
 */
export function pidCheckable(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return false;
  const own = pidNamespace();
  const sameNamespace = holder.ns === undefined || holder.ns === null || own === null || holder.ns === own;
  return sameNamespace && (holder.ns === undefined || sameBoot(holder));
}

/** Whether the holder's recorded start time is of this boot (unknown counts as this one). */
function sameBoot(holder: LockHolder): boolean {
  if (holder.start === null) return true;
  const own = processStart(process.pid);
  return own === null || holder.start.slice(0, holder.start.lastIndexOf(':')) === own.slice(0, own.lastIndexOf(':'));
}

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
 * Whether the holder is certainly gone: on this host and in this pid namespace, and its
 * pid is not alive, has ended and waits to be reaped (a zombie), or is alive with another
 * start time (pid reuse). A holder on another host cannot be checked and counts as live;
 * one in another pid namespace of this host is judged by its heartbeat (see
 * `DataFileLock.acquire`). A holder that merely stalls stays live: no timeout.
 */
export function isStale(holder: LockHolder): boolean {
  if (!pidCheckable(holder)) return false;
  if (!pidAlive(holder.pid) || processEnded(holder.pid)) return true;
  if (holder.start === null) return false;
  const start = processStart(holder.pid);
  return start !== null && start !== holder.start;
}

const TAKEOVER_WAIT_MS = 20;
const MAX_ATTEMPTS = 500; // 10 s of waiting on another starter's take-over

/** What a file system that does not set a file's times answers `utimes` with. */
const UNSUPPORTED = new Set(['EPERM', 'ENOSYS', 'EOPNOTSUPP', 'ENOTSUP']);

/** Why a holder no longer holds its lock: another took it, it was removed, it could not be read or refreshed for seconds. */
export type LockLoss = 'taken' | 'gone' | 'unreadable' | 'unrefreshed';

/** How often a holder refreshes its lock, and how long a starter watches a lock that no one refreshes before taking it over. */
export interface LockTiming {
  beatMs: number;
  staleMs: number;
}

/**
 * A beat a second; five seconds unrefreshed make a holder in another pid namespace stale.
 * A restart of a container killed with SIGKILL (a new pid namespace) so waits 5 s
 * for its own old lock; a holder whose event loop stalls that long (a paused container)
 * finds its lock taken at its next beat and stops writing (see `watch`).
 */
export const LOCK_TIMING: LockTiming = { beatMs: 1_000, staleMs: 5_000 };

/** When the lock file was last refreshed (its mtime), with the holder it names; undefined when it is gone. */
function lockState(path: string): { mtimeMs: number; id: string } | undefined {
  let fd: number;
  try {
    // Opened, not stat'ed by name: on NFS an open revalidates the attributes (close-to-open), a stat may be served from the cache.
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const mtimeMs = fstatSync(fd).mtimeMs;
    const holder = parseHolder(readFileSync(fd, 'utf8'));
    return { mtimeMs, id: holder.id };
  } finally {
    closeSync(fd);
  }
}

/**
 * Watches the lock of a holder that cannot be checked by its pid for `staleMs`:
 * 'stopped' when nothing refreshed it in that time, 'beating' when its holder did,
 * 'changed' when it was replaced or removed meanwhile (start over). Only a change of the
 * lock's mtime counts, never its age: the holder stamps it with its own clock, which may
 * be minutes off this one's (another machine).
 */
function heartbeatOf(path: string, holder: LockHolder, timing: LockTiming): 'stopped' | 'beating' | 'changed' {
  const first = lockState(path);
  if (first?.id !== holder.id) return 'changed';
  const step = Math.max(10, Math.min(100, timing.beatMs / 4));
  for (let waited = 0; waited < timing.staleMs; waited += step) {
    sleep(step);
    const now = lockState(path);
    if (now?.id !== holder.id) return 'changed';
    if (now.mtimeMs !== first.mtimeMs) return 'beating';
  }
  return 'stopped';
}

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
 * A holder's pid tells nothing from another pid namespace: two containers given the same
 * hostname are both pid 1. So the holder refreshes the lock file's modification time
 * every second (`watch`), and a starter that finds a lock of another pid namespace on its
 * host takes it over only once no one has refreshed it for 5 s.
 *
 * @example
 * const lock = DataFileLock.acquire('/data/sandbox.json'); // throws DataFileLocked
 * lock.release();
 */
export class DataFileLock {
  private beat: NodeJS.Timeout | undefined;
  private onLost: ((now: LockHolder | undefined, why: LockLoss) => void) | undefined;
  /** Checks in a row that could not read the lock. */
  private unreadable = 0;
  private lost = false;
  /** The lock file's inode as this holder made it: a lock renamed over it, or made anew, has another. */
  private readonly inode: number;
  /** When the lock was last found this holder's. */
  private confirmedAt = Date.now();
  /** Failed refreshes, or unreadable checks, in a row before another starter could judge the lock stale. */
  private readonly missesAllowed: number;

  private constructor(
    readonly path: string,
    readonly holder: LockHolder,
    private readonly timing: LockTiming,
  ) {
    this.inode = statSync(path).ino;
    this.missesAllowed = Math.max(1, Math.floor((timing.staleMs - timing.beatMs) / timing.beatMs));
  }

  /**
   * Takes the lock of the data file at `dataPath`, or throws DataFileLocked naming the
   * holder. Touches no file when it throws: a lock that cannot be written (a full disk)
   * throws a DataFileError naming it, its temporary file removed.
   */
  static acquire(dataPath: string, fs: LockWrites = nodeFileSystem, timing: LockTiming = LOCK_TIMING): DataFileLock {
    const path = `${dataPath}.lock`;
    const me: LockHolder = {
      pid: process.pid,
      host: hostname(),
      start: processStart(process.pid),
      ns: pidNamespace(),
      since: new Date().toISOString(),
      id: randomBytes(8).toString('hex'),
    };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const current = readHolder(path);
      if (current === undefined) {
        if (createExclusive(path, me, fs)) return new DataFileLock(path, me, timing).tidied();
        continue;
      }
      if (!isStale(current)) {
        if (current.host !== hostname() || pidCheckable(current)) throw new DataFileLocked(dataPath, current);
        const heartbeat = heartbeatOf(path, current, timing);
        if (heartbeat === 'beating') throw new DataFileLocked(dataPath, current);
        if (heartbeat === 'changed') continue;
      }
      const outcome = takeOver(path, current, me, fs, timing);
      if (outcome === 'taken') return new DataFileLock(path, me, timing).tidied();
      if (outcome === 'busy') sleep(TAKEOVER_WAIT_MS);
    }
    const holder = readHolder(path);
    if (holder) throw new DataFileLocked(dataPath, holder);
    throw new Error(`Could not take the lock ${path}: another sandbox keeps taking it over. Try again.`);
  }

  /**
   * Refreshes the lock every `beatMs` while it is held, so that a starter in another pid
   * namespace sees this holder live, and checks at each beat that it still holds it (see
   * `held`). `onLost` is called once, when it finds it does not: the owner must write
   * nothing more to the data file's files.
   */
  watch(onLost: (now: LockHolder | undefined, why: LockLoss) => void, onUnrefreshable?: (error: Error) => void): void {
    this.onLost = onLost;
    let refreshed = false;
    let unsupported = false;
    let failed = 0;
    this.beat ??= setInterval(() => {
      if (!this.held() || unsupported) return;
      try {
        const time = new Date();
        utimesSync(this.path, time, time);
        refreshed = true;
        failed = 0;
      } catch (error) {
        // A file system that refuses to set a file's times (some FUSE or SMB mounts) is said
        // once: containers of one hostname are not told apart there. Any other failure, beat
        // after beat, lets another starter judge the lock stale: stop writing before it can.
        if (!refreshed && UNSUPPORTED.has((error as NodeJS.ErrnoException).code ?? '')) {
          unsupported = true;
          onUnrefreshable?.(error as Error);
        } else if ((failed += 1) >= this.missesAllowed) this.lose(undefined, 'unrefreshed');
      }
    }, this.timing.beatMs).unref();
  }

  /**
   * Whether the lock is still this holder's, read from the file now: the same inode (not
   * replaced by a take-over, nor removed and made anew) naming this holder. Lost (and
   * `onLost` called, once) when it is not, and when it could not be read at several
   * checks in a row over `staleMs - beatMs`: by then another starter may have taken it.
   * Owners call it right before a write that must not follow a loss (a checkpoint's
   * rename), and through `heldLately` before each commit.
   */
  held(): boolean {
    if (this.lost) return false;
    let now: LockHolder | undefined;
    try {
      if (statSync(this.path).ino === this.inode) {
        now = readHolder(this.path);
        if (now?.id === this.holder.id) {
          this.confirmedAt = Date.now();
          this.unreadable = 0;
          return true;
        }
      } else now = readHolder(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.unreadable += 1;
        if (this.unreadable < this.missesAllowed || Date.now() - this.confirmedAt < this.timing.staleMs - this.timing.beatMs) return true;
        this.lose(undefined, 'unreadable');
        return false;
      }
      now = undefined;
    }
    this.lose(now, now === undefined ? 'gone' : 'taken');
    return false;
  }

  private lose(now: LockHolder | undefined, why: LockLoss): void {
    if (this.lost) return;
    this.lost = true;
    this.stopWatching();
    this.onLost?.(now, why);
  }

  /** `held()`, read from the file when it was last confirmed over a beat ago: cheap enough for every commit. */
  heldLately(): boolean {
    if (this.lost) return false;
    return Date.now() - this.confirmedAt < this.timing.beatMs || this.held();
  }

  private stopWatching(): void {
    clearInterval(this.beat);
    this.beat = undefined;
  }

  /** Removes the lock file if it is still this process's. Safe to call twice. */
  release(): void {
    this.stopWatching();
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
      // A starter in another pid namespace has a pid that means nothing here: its temp file
      // goes only once it has stood `staleMs` too (a starter holds one for microseconds).
      const pid = Number(/(?:^|\.)tmp-(\d+)-/.exec(rest)?.[1] ?? 0);
      const stale = pid > 0 ? !pidAlive(pid) && ageMs(join(dir, name)) >= this.timing.staleMs : rest.startsWith('takeover-');
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
  return parseHolder(text);
}

function parseHolder(text: string): LockHolder {
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
export function takeOver(path: string, stale: LockHolder, me: LockHolder, fs: LockWrites = nodeFileSystem, timing: LockTiming = LOCK_TIMING): 'taken' | 'changed' | 'busy' {
  for (let n = 0; ; n += 1) {
    const marker = `${path}.takeover-${stale.id}-${n}`;
    if (!createExclusive(marker, me, fs)) {
      const creator = readHolder(marker);
      if (creator !== undefined && markerAbandoned(marker, creator, timing)) continue; // its creator died mid take-over: pass it over
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

/**
 * Whether a take-over marker's creator died mid take-over: it is stale (see `isStale`),
 * or, in another pid namespace, the marker has stood `staleMs` (a take-over takes
 * microseconds).
 */
function markerAbandoned(marker: string, creator: LockHolder, timing: LockTiming): boolean {
  if (isStale(creator)) return true;
  if (creator.host !== hostname() || pidCheckable(creator)) return false;
  try {
    return Date.now() - statSync(marker).mtimeMs >= timing.staleMs;
  } catch {
    return true; // gone meanwhile: try it again
  }
}

/** How long ago a file was last changed (0 when it is gone). */
function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
