import { Low, Memory } from 'lowdb';
import { CheckpointedRecords } from './checkpoints.js';
import { dataFilePath } from './data-path.js';
import { describeError, errnoOf, Utf8Chunk } from './files.js';
import type { LockTiming } from './heartbeat.js';
import type { Journal } from './journal.js';
import { patchOf } from './journal-patch.js';
import { DataFileLock, type LockLoss } from './lock.js';
import type { LockHolder } from './lock-holder.js';
import { LOCK_LOST, lockTakenMessage } from './lock-lost.js';
import { cannotWriteJournal, journalOf, migrateLoaded, readDataFile, refuse, unrefreshableLock, writeAtStart, type StartNotices } from './recovery.js';
import { emptyData } from './schema.js';
import { DataFileError, StoreUnavailable, type JournalOp, type JournaledFileData, type JournaledFileHealth, type RecordFormats, type StoreFileSystem } from './types.js';

const MiB = 2 ** 20;

/** The journal's op for a record put: its new fields when it can carry them (see patchOf), else the whole record. */
function opOf(c: string, k: string, before: unknown, after: unknown): JournalOp {
  if (after === undefined) return { c, k, d: 1 };
  const patch = patchOf(before, after);
  return patch === undefined ? { c, k, v: after } : { c, k, p: patch };
}
/** The errno codes of a disk or quota out of space. */
const OUT_OF_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

export interface JournaledFileOptions extends StartNotices {
  /** A file path, or `:memory:` to keep nothing (and take no lock). */
  path: string;
  /** fsync every journal append (survives power loss, not only a crash of the process). */
  fsync?: boolean;
  /**
   * Checkpoint (rewrite the data file) once the journal holds this many bytes, or as
   * many as the data file if that is more, so the cost of checkpoints stays
   * proportional to the changes whatever the size of the store. Default 64 MiB: the
   * journal is replayed at the next start, so a bigger one makes starts slower.
   */
  checkpointBytes?: number;
  /** Close the journal segment and start the next once it holds this many bytes. Default 64 MiB. */
  segmentBytes?: number;
  /**
   * `close()` rewrites the data file only when the store's data is at most this many
   * bytes, so small sandboxes stop with one readable file and big ones stop fast (their
   * journal is replayed at the next start). Default 32 MiB.
   */
  closeCheckpointBytes?: number;
  /** After a failed checkpoint, wait this long before the next one starts by itself. Default 30 s. */
  checkpointRetryMs?: number;
  /** How often the lock is refreshed, and how long a lock of another pid namespace must stand unrefreshed to be taken over (tests shorten them). */
  lockTiming?: LockTiming;
  /** The file operations used to write (tests inject ENOSPC here). Default node:fs. */
  fileSystem?: StoreFileSystem;
  /** Told about failures that no caller sees: a failed checkpoint, a failed background commit. */
  onError?: (error: Error) => void;
  /** Told about every journal append that fails (the commit throws StoreUnavailable), for a log the caller's 503 does not make. */
  onWriteFailed?: (error: Error) => void;
  /** Told when a journal append succeeds after one or more failed: the store is writable again. */
  onWriteResumed?: () => void;
  /**
   * Turns a record into the form kept in memory as it comes in (read from the data file or
   * the journal, or put). It must keep the record's JSON as it was, and may change a
   * record it is given unfrozen (one just parsed) in place. `current` is the record it
   * replaces, as kept: a part the two share is packed already. Default: kept as given.
   */
  pack?: (collection: string, value: unknown, current?: unknown) => unknown;
  /** How records of a collection are written to the data file when shorter than their JSON (see RecordFormat). Default: as their JSON. */
  formats?: RecordFormats;
  /**
   * Called once the records are read, the journal replayed and the whole migrated, before anything is written (the migrated
   * file, a new file, a journal segment): the owner builds what it keeps of them (indexes). Throwing refuses the start,
   * leaving the files as they were and no lock.
   */
  onLoad?: (store: JournaledFile) => void;
  /** Aborted while the journal replays: the open throws its reason as a refused start does, every file as it was, no lock. */
  signal?: AbortSignal;
  /**
   * Start from what is intact when the journal is damaged (an older segment cut short or
   * missing, a line that is not a commit): the damaged segment and those after it are moved
   * into a dated folder beside the data file, and `onSalvage` is told what was set aside.
   * Without it a damaged journal refuses the start, every file untouched.
   */
  salvageJournal?: boolean;
}

/**
 * The sandbox's records, held in memory and made durable through a journal.
 *
 * A change is `put`/`delete`, then `commit()` appends it to the journal before the
 * request is answered. When the append fails (a full disk), `commit()` throws
 * `StoreUnavailable` and the changes are rolled back. The readable JSON data file is
 * rewritten in the background (a checkpoint) when the journal grows. The data file is
 * locked against a second process. See docs/decisions/0001-journaled-store.md.
 *
 * The records and their pending changes are RecordsInMemory's, checkpoints CheckpointedRecords'; this class opens the file, commits, closes and fences it.
 *
 * @example
 * const store = await JournaledFile.open({ path: ':memory:' });
 * store.put('orders', '1', { order_no: '1' });
 * store.commit();
 */
export class JournaledFile extends CheckpointedRecords<JournaledFileOptions> {
  private failure: { code: string; error: string; since: number } | undefined;
  /**
   * While the disk is out of space: the shortest journal line that failed. A disk all but full still takes short lines (a clock's
   * save), so only a line as long ends the failure, or health would say ok between two commits that fail.
   */
  private failedBytes = 0;
  /** Whom the lock named when it was found lost (undefined: no one, or unreadable). */
  private lostTo: LockHolder | undefined;
  private lostWhy: LockLoss = 'taken';
  /** The journal line being written, encoded into one reused buffer (the append is synchronous). */
  private readonly line = new Utf8Chunk();
  /** The bytes of the line written last. */
  private lastBytes = 0;

  private constructor(db: Low<JournaledFileData>, journal: Journal | undefined, lock: DataFileLock | undefined, options: JournaledFileOptions) {
    super(db, journal, lock, options);
  }

  /**
   * Opens the journaled file on the data file `path` names, symbolic links followed (see
   * `dataFilePath`): takes the data file's lock (throws DataFileLocked, touching no file,
   * when another live sandbox holds it), reads the data file and replays the journal,
   * both as streams, and once the start is accepted removes temp files of an interrupted
   * checkpoint (a refused start leaves them).
   */
  static async open(options: JournaledFileOptions): Promise<JournaledFile> {
    if (options.path === ':memory:') {
      const store = new JournaledFile(new Low<JournaledFileData>(new Memory<JournaledFileData>(), emptyData()), undefined, undefined, options);
      options.onLoad?.(store);
      return store;
    }
    const path = dataFilePath(options.path);
    const lock = DataFileLock.acquire(path, undefined, options.lockTiming);
    // The lock is refreshed from now on; taken meanwhile, it fences the file (or refuses the start, before the first write).
    let opened: JournaledFile | undefined;
    let takenWhileOpening: { by: LockHolder | undefined; why: LockLoss } | undefined;
    lock.watch(
      (by, why) => {
        if (opened) opened.lockTaken(by, why);
        else takenWhileOpening = { by, why };
      },
      (error) => options.onError?.(unrefreshableLock(path, error)),
    );
    let journal: Journal | undefined;
    try {
      const { db, snapshot, fresh, fromVersion } = await readDataFile(path, options);
      journal = journalOf(path, db.data, options);
      const store = new JournaledFile(db, journal, lock, options);
      // The journal holds changes in the file's own schema: replay them, then migrate the whole.
      const { salvaged } = await journal.replay(db.data.journal_generation, (op) => store.apply(op), { salvage: options.salvageJournal === true, signal: options.signal });
      migrateLoaded(db, fromVersion, path);
      // Before the first write: an owner that cannot build on these records refuses the start with the files as they were.
      options.onLoad?.(store);
      // Nothing is written before this point: a sandbox that lost its lock while it loaded leaves the files to the new holder.
      if (!lock.held() || takenWhileOpening) throw new DataFileError(lockTakenMessage(path, takenWhileOpening?.by, takenWhileOpening?.why ?? 'taken'));
      opened = store;
      snapshot.removeLeftovers();
      if (salvaged) journal.setAside(salvaged);
      journal.open();
      // Commits kept from a segment set aside live in memory only until a checkpoint holds them.
      await writeAtStart(store, path, fromVersion, fresh || salvaged !== undefined, options);
      if (salvaged) options.onSalvage?.(salvaged);
      // Lost during the start's checkpoint (which then stopped): refuse the start rather than serve fenced.
      if (store.lockLost) throw new DataFileError(lockTakenMessage(path, store.lostTo, store.lostWhy));
      return store;
    } catch (error) {
      // A refused start leaves the files as they were: no segment it opened empty, no lock.
      refuse(journal, lock, takenWhileOpening !== undefined || opened?.lockLost === true);
      throw error;
    }
  }

  /**
   * For an owner whose start fails after the open (`error`: a start-time write refused, say): closes as a refused open does,
   * committing and checkpointing nothing more, and returns the error to tell: a journal append that failed as a start message naming the segment.
   */
  async refuseStart(error: unknown): Promise<unknown> {
    if (this.closing || !this.journal) return error;
    this.closing = this.stopCheckpoint = true;
    await this.checkpointing;
    this.closed = true;
    refuse(this.journal, this.lock!, this.lockLost);
    if (this.lockLost) return new DataFileError(lockTakenMessage(this.file()!.path, this.lostTo, this.lostWhy), { cause: error });
    return this.failure ? cannotWriteJournal(this.journal.currentPath, this.failure.error, error) : error;
  }

  get isPersistent(): boolean {
    return this.journal !== undefined;
  }

  /**
   * Whether commits can be saved. Not writable from a failed journal append until the
   * next one that succeeds (out of space: one at least as long as the shortest that
   * failed); `checkpointError` while checkpoints fail.
   */
  health(): JournaledFileHealth {
    return {
      writable: this.failure === undefined,
      ...(this.failure ?? {}),
      ...(this.checkpointError !== undefined ? { checkpointError: this.checkpointError } : {}),
    };
  }

  /**
   * Appends every pending change to the journal as one line. Call before acknowledging
   * a change. Throws `StoreUnavailable` (with the errno code) when the write fails: then
   * the pending changes are rolled back to what they were before, and nothing of them
   * is saved.
   */
  commit(): void {
    if (this.pending.size === 0) return;
    if (!this.journal) {
      this.pending.clear();
      return;
    }
    if (this.unavailable()) {
      this.rollBack();
      throw new StoreUnavailable(this.lockLost ? LOCK_LOST : 'ECLOSED');
    }
    let ops: JournalOp[];
    try {
      ops = [];
      for (const { op, before, after } of this.pending.values()) ops.push(opOf(op.c, op.k, before, after));
    } catch (error) {
      this.failed(error, 0, () => this.rollBack());
    }
    this.append(ops, () => this.rollBack());
    this.pending.clear();
    this.written();
  }

  /**
   * The writes of a unit of work, each record once (`collection`, `key`, `after`; `after`
   * undefined removes it): as `put` or `delete` of each in turn and then `commit()`, the same
   * journal line and the same errors, without noting each as a pending change first. Sets
   * each write's `before`, the record it replaced as kept (undefined: none). A record the
   * store refuses (`pack` throws) undoes the writes made and is thrown as it is.
   */
  commitWrites(writes: ReadonlyArray<{ collection: string; key: string; before: unknown; after: unknown }>): void {
    if (this.pending.size > 0) {
      // Changes already pending (a put outside a unit, its commit a microtask away): they go in this line too, first.
      try {
        for (const write of writes) write.before = write.after === undefined ? this.delete(write.collection, write.key) : this.put(write.collection, write.key, write.after);
      } catch (error) {
        this.rollBack();
        throw error;
      }
      this.commit();
      return;
    }
    const ops: JournalOp[] = [];
    let applied = 0;
    const undo = () => {
      for (let i = applied - 1; i >= 0; i--) {
        const { collection, key, before } = writes[i]!;
        const records = this.collection(collection);
        if (before === undefined) records.delete(key);
        else records.set(key, before);
      }
    };
    try {
      for (let i = 0; i < writes.length; i++) {
        const write = writes[i]!;
        const records = this.collection(write.collection);
        const current = records.get(write.key);
        write.before = current;
        if (write.after === undefined) {
          records.delete(write.key);
          applied += 1;
          ops.push({ c: write.collection, k: write.key, d: 1 });
          continue;
        }
        const after = this.kept(write.collection, write.after, current);
        records.set(write.key, after);
        applied += 1;
        ops.push(opOf(write.collection, write.key, current, after));
      }
    } catch (error) {
      undo();
      throw error;
    }
    if (!this.journal) return;
    if (this.unavailable()) {
      undo();
      throw new StoreUnavailable(this.lockLost ? LOCK_LOST : 'ECLOSED');
    }
    this.append(ops, undo);
    this.written();
  }

  /** Whether a commit must fail now: the store closed, its lock lost or not refreshed lately. */
  private unavailable(): boolean {
    return this.closed || this.lockLost || (this.lock !== undefined && !this.lock.heldLately());
  }

  /** Appends `ops` to the journal as one line; on a failure, `undo` puts the records back and this throws StoreUnavailable. */
  private append(ops: JournalOp[], undo: () => void): void {
    let bytes = 0;
    try {
      this.line.add(JSON.stringify(ops));
      this.line.add('\n');
      bytes = this.line.length;
      this.journal!.append(this.line.take());
    } catch (error) {
      this.failed(error, bytes, undo);
    }
    this.lastBytes = bytes;
  }

  /** A line that could not be written: the records put back, the failure noted and thrown as StoreUnavailable. */
  private failed(error: unknown, bytes: number, undo: () => void): never {
    // A line not finished must not begin the next one.
    this.line.clear();
    undo();
    const code = errnoOf(error);
    this.failure ??= { code, error: describeError(error), since: Date.now() };
    // At most 64 KiB: a large change that failed once (a reset, a bulk create) is not made again, and a disk that takes 64 KiB takes the usual ones.
    if (OUT_OF_SPACE.has(code) && bytes > 0) this.failedBytes = Math.min(this.failedBytes === 0 ? bytes : this.failedBytes, bytes, 64 * 1024);
    this.options.onWriteFailed?.(error as Error);
    throw new StoreUnavailable(code, { cause: error });
  }

  /** After a line was written: a failure it ends, a checkpoint it calls for. */
  private written(): void {
    if (this.failure !== undefined && this.lastBytes >= this.failedBytes) this.resumed();
    if (this.shouldCheckpoint()) void this.checkpoint();
  }

  /** A checkpoint that rewrote the data file ends a failure for want of space: the disk took far more than any line. */
  protected override checkpointed(): void {
    if (this.failure !== undefined && OUT_OF_SPACE.has(this.failure.code)) this.resumed();
  }

  private resumed(): void {
    this.failure = undefined;
    this.failedBytes = 0;
    this.options.onWriteResumed?.();
  }

  /**
   * Commits, makes the journal durable (fsync) and releases the lock. Rewrites the data file only when that is cheap
   * (`closeCheckpointBytes`); a checkpoint running in the background is stopped, so closing takes about as long whatever the
   * store's size. Safe to call twice.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    let releaseFailed: unknown;
    try {
      this.commitReporting();
      this.stopCheckpoint = true;
      await this.checkpointing;
      this.stopCheckpoint = false;
      if (this.journal && !this.lockLost && (this.file()?.bytes ?? 0) + this.journal.bytesSinceCheckpoint <= (this.options.closeCheckpointBytes ?? 32 * MiB) && this.journal.bytesSinceCheckpoint > 0) {
        await this.checkpoint();
      }
      this.journal?.flush();
    } finally {
      this.closed = true;
      this.journal?.close();
      // When closing failed, that failure is the one thrown; a lock left behind is taken over as stale.
      try {
        this.lock?.release();
      } catch (error) {
        releaseFailed = error;
      }
    }
    if (releaseFailed !== undefined) throw releaseFailed;
  }

  /**
   * Another sandbox took the data file's lock (this one stalled longer than the lock's staleness, or its lock file was removed by
   * hand): from now on this store writes nothing to the data file's files. A checkpoint running stops at its next chunk, every
   * commit fails as a failed write does (503), health shows the store degraded, and the error is logged once.
   */
  private lockTaken(by: LockHolder | undefined, why: LockLoss): void {
    if (this.closed || this.lockLost) return;
    this.lockLost = true;
    this.lostTo = by;
    this.lostWhy = why;
    this.stopCheckpoint = true;
    const error = new DataFileError(lockTakenMessage(this.file()!.path, by, why));
    this.failure = { code: LOCK_LOST, error: error.message, since: Date.now() };
    this.options.onError?.(error);
  }
}
