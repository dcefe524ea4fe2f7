import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readdirSync, readSync, rmSync, statSync, utimesSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { DataFileLocked } from './data-file-locked.js';
import { nodeFileSystem } from './files.js';
import { heartbeatOf, LOCK_TIMING, type LockTiming } from './heartbeat.js';
import { ageMs, createExclusive, parseHolder, readHolder, type LockWrites } from './lock-file.js';
import { isStale, pidCheckable, type LockHolder } from './lock-holder.js';
import { pidAlive, pidNamespace, processStart } from './process-identity.js';
import { sleep } from './sleep.js';
import { takeOver } from './takeover.js';

const TAKEOVER_WAIT_MS = 20;
const MAX_ATTEMPTS = 500; // 10 s of waiting on another starter's take-over
/** A stat's numbers as bigints: an inode number past 2^53 (XFS, btrfs, NFS) is not rounded into another's. */
const BIG = { bigint: true } as const;
/** What a file system that does not set a file's times answers `utimes` with. */
const UNSUPPORTED = new Set(['EPERM', 'ENOSYS', 'EOPNOTSUPP', 'ENOTSUP']);
/** What opening a file answers when the process, or the system, has no file descriptor left. */
const OUT_OF_DESCRIPTORS = new Set(['EMFILE', 'ENFILE']);

/** The errno code of an error or of the error it wraps (readHolder's DataFileError). */
const errorCode = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? (error as { cause?: NodeJS.ErrnoException }).cause?.code ?? '';
/** Why a holder no longer holds its lock: another took it, it was removed, it could not be read or refreshed for seconds. */
export type LockLoss = 'taken' | 'gone' | 'unreadable' | 'unrefreshed';

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
  /**
   * The lock file, kept open while held: its inode cannot be freed, so not reused either,
   * and a lock at the path with this device and inode is this holder's. One renamed over
   * it (a take-over), or made anew after it was removed, has another.
   */
  private readonly fd: number;
  private open = true;
  private readonly dev: bigint;
  private readonly inode: bigint;
  /** When the lock was last found this holder's. */
  private confirmedAt = Date.now();
  /** Failed refreshes, or unreadable checks, in a row before another starter could judge the lock stale. */
  private readonly missesAllowed: number;
  /** The holder of the stale lock this one replaced (a sandbox killed, or its machine restarted), for the start's log. */
  tookOverFrom: LockHolder | undefined;

  private constructor(
    readonly path: string,
    readonly holder: LockHolder,
    private readonly timing: LockTiming,
  ) {
    this.fd = openSync(path, 'r');
    try {
      // From a stat of the path, as every check compares it with one: on some overlay file systems an open file's fstat names another device.
      ({ dev: this.dev, ino: this.inode } = statSync(path, BIG));
    } catch (error) {
      closeSync(this.fd);
      throw error;
    }
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
      path: dataPath,
    };
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      const current = readHolder(path);
      if (current === undefined) {
        if (createExclusive(path, me, fs)) return DataFileLock.taken(path, me, timing);
        continue;
      }
      if (!isStale(current)) {
        if (current.host !== hostname() || pidCheckable(current)) throw new DataFileLocked(dataPath, current);
        const heartbeat = heartbeatOf(path, current, timing);
        if (heartbeat === 'beating') throw new DataFileLocked(dataPath, current);
        if (heartbeat === 'changed') continue;
      }
      const outcome = takeOver(path, current, me, fs, timing);
      if (outcome === 'taken') return Object.assign(DataFileLock.taken(path, me, timing), { tookOverFrom: current });
      if (outcome === 'busy') sleep(TAKEOVER_WAIT_MS);
    }
    const holder = readHolder(path);
    if (holder) throw new DataFileLocked(dataPath, holder);
    throw new Error(`Could not take the lock ${path}: another sandbox keeps taking it over. Try again.`);
  }

  /**
   * The holder of a lock file just made: one that cannot be opened or tidied (no file
   * descriptor left at start) is removed again, so that a retry does not find this live
   * process holding it.
   */
  private static taken(path: string, me: LockHolder, timing: LockTiming): DataFileLock {
    // The file just made, told by a stat (which needs no descriptor).
    const made = statSync(path, BIG).ino;
    let lock: DataFileLock | undefined;
    try {
      lock = new DataFileLock(path, me, timing);
      return lock.tidied();
    } catch (error) {
      lock?.closeFile();
      try {
        if (statSync(path, BIG).ino === made) rmSync(path, { force: true });
      } catch {
        // Left as it is: the next start takes over the lock of a process that is gone.
      }
      throw error;
    }
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
   * Whether the lock is still this holder's, looked up now: the file at its path is the
   * one this holder keeps open (not replaced by a take-over, nor removed and made anew),
   * naming it. A process out of file descriptors (a flood of connections) reads it through
   * the one it keeps, so it keeps its lock, and the beat (utimes, which needs none) keeps
   * it fresh for other starters. Lost (and `onLost` called, once) when it is not, and when
   * it could not be looked up at several checks in a row over `staleMs - beatMs`: by then
   * another starter may have taken it. Owners call it right before a write that must not
   * follow a loss (a checkpoint's rename), and through `heldLately` before each commit.
   */
  held(): boolean {
    if (this.lost || !this.open) return false;
    let at: { dev: bigint; ino: bigint };
    try {
      at = statSync(this.path, BIG);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        this.lose(undefined, 'gone');
        return false;
      }
      return this.unreadableOnce();
    }
    const mine = at.dev === this.dev && at.ino === this.inode;
    let now: LockHolder | undefined;
    try {
      // Read through an open of its path, which on NFS revalidates what a stat may take from its cache.
      now = readHolder(this.path);
    } catch (error) {
      // Another file is not this holder's whoever it names (that only goes in the message).
      if (mine) {
        // Out of file descriptors: read through the one this holder keeps, the file the stat found at the path.
        if (!OUT_OF_DESCRIPTORS.has(errorCode(error))) return this.unreadableOnce();
        try {
          now = this.readOwn();
        } catch {
          return this.unreadableOnce();
        }
      }
    }
    if (mine && now?.id === this.holder.id) {
      this.confirmedAt = Date.now();
      this.unreadable = 0;
      return true;
    }
    // Another file at the path was taken, even when whom it names could not be read.
    this.lose(now, mine && now === undefined ? 'gone' : 'taken');
    return false;
  }

  private lose(now: LockHolder | undefined, why: LockLoss): void {
    if (this.lost) return;
    this.lost = true;
    this.stopWatching();
    this.closeFile();
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
    this.closeFile();
    if (readHolder(this.path)?.id !== this.holder.id) return;
    try {
      rmSync(this.path, { force: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new Error(`The lock file ${this.path} could not be removed (${code}); the data is saved, and the next start takes the lock over once it is stale. Check that the folder ${dirname(this.path)} is writable.`);
    }
  }

  /** A check that could not look: still held, unless checks have failed in a row for longer than another starter waits. */
  private unreadableOnce(): boolean {
    this.unreadable += 1;
    if (this.unreadable < this.missesAllowed || Date.now() - this.confirmedAt < this.timing.staleMs - this.timing.beatMs) return true;
    this.lose(undefined, 'unreadable');
    return false;
  }

  /** The holder the lock file this holder keeps open names now (read at its start, through that descriptor). */
  private readOwn(): LockHolder | undefined {
    const bytes = Buffer.alloc(fstatSync(this.fd).size);
    const read = readSync(this.fd, bytes, 0, bytes.length, 0);
    return parseHolder(bytes.subarray(0, read).toString('utf8'));
  }

  private closeFile(): void {
    if (!this.open) return;
    this.open = false;
    try {
      closeSync(this.fd);
    } catch {
      // Closed either way (close(2) releases the descriptor even when it reports an error).
    }
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
