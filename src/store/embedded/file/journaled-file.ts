import { Low, Memory } from 'lowdb';
import { CheckpointedRecords } from './checkpoints.js';
import { dataFilePath } from './data-path.js';
import { Utf8Chunk } from './files.js';
import type { Journal } from './journal.js';
import { opOf } from './journal-patch.js';
import { DataFileLock, type LockLoss } from './lock.js';
import type { LockHolder } from './lock-holder.js';
import { LOCK_LOST, lockTakenMessage } from './lock-lost.js';
import type { JournaledFileOptions } from './journaled-file-options.js';
import { cannotWriteJournal, journalOf, migrateLoaded, readDataFile, refuse, unrefreshableLock, writeAtStart } from './recovery.js';
import { emptyData } from './schema.js';
import { DataFileError, StoreUnavailable, type JournalOp, type JournaledFileData, type JournaledFileHealth } from './types.js';
import { WriteFailures } from './write-failures.js';

const MiB = 2 ** 20;

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
export class JournaledFile extends CheckpointedRecords<JournaledFileOptions<JournaledFile>> {
  private readonly failures: WriteFailures;
  /** Whom the lock named when it was found lost (undefined: no one, or unreadable). */
  private lostTo: LockHolder | undefined;
  private lostWhy: LockLoss = 'taken';
  /** The journal line being written, encoded into one reused buffer (the append is synchronous). */
  private readonly line = new Utf8Chunk();

  private constructor(db: Low<JournaledFileData>, journal: Journal | undefined, lock: DataFileLock | undefined, options: JournaledFileOptions<JournaledFile>) {
    super(db, journal, lock, options);
    this.failures = new WriteFailures(options);
  }

  /**
   * Opens the journaled file on the data file `path` names, symbolic links followed (see
   * `dataFilePath`): takes the data file's lock (throws DataFileLocked, touching no file,
   * when another live sandbox holds it), reads the data file and replays the journal,
   * both as streams, and once the start is accepted removes temp files of an interrupted
   * checkpoint (a refused start leaves them).
   */
  static async open(options: JournaledFileOptions<JournaledFile>): Promise<JournaledFile> {
    if (options.path === ':memory:') {
      const store = new JournaledFile(new Low<JournaledFileData>(new Memory<JournaledFileData>(), emptyData()), undefined, undefined, options);
      options.onLoad?.(store);
      return store;
    }
    const path = dataFilePath(options.path);
    const lock = DataFileLock.acquire(path, undefined, options.lockTiming);
    if (lock.tookOverFrom) options.onLockTakenOver?.(lock.tookOverFrom);
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
      const { salvaged, torn } = await journal.replay(db.data.journal_generation, (op) => store.apply(op), { salvage: options.salvageJournal === true, signal: options.signal });
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
      if (torn) options.onTornTail?.(torn);
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
    const failure = this.failures.failure;
    return failure ? cannotWriteJournal(this.journal.currentPath, failure.error, error) : error;
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
      writable: this.failures.failure === undefined,
      ...(this.failures.failure ?? {}),
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
    const ops: JournalOp[] = [];
    try {
      for (const { op, before, after } of this.pending.values()) ops.push(opOf(op.c, op.k, before, after));
    } catch (error) {
      this.failed(error, 0, () => this.rollBack());
    }
    const bytes = this.append(ops, () => this.rollBack());
    this.pending.clear();
    this.written(bytes);
  }

  /**
   * The writes of a unit of work, each record once (`collection`, `key`, `after`; `after`
   * undefined removes it): as `put` or `delete` of each in turn and then `commit()` (changes
   * already pending go first, in a line of their own), the same journal line and the same
   * errors, without noting each as a pending change first. Sets
   * each write's `before`, the record it replaced as kept (undefined: none). A record the
   * store refuses (`pack` throws) undoes the writes made and is thrown as it is.
   */
  commitWrites(writes: ReadonlyArray<{ collection: string; key: string; before: unknown; after: unknown }>): void {
    // Changes already pending (a put outside a unit, its commit a microtask away) go first, in a line of their own.
    this.commit();
    if (writes.length === 0) return;
    const ops: JournalOp[] = [];
    const undo = this.applied(writes, ops);
    if (!this.journal) return;
    if (this.unavailable()) {
      undo();
      throw new StoreUnavailable(this.lockLost ? LOCK_LOST : 'ECLOSED');
    }
    this.written(this.append(ops, undo));
  }

  /** Whether a commit must fail now: the store closed, its lock lost or not refreshed lately. */
  private unavailable(): boolean {
    return this.closed || this.lockLost || (this.lock !== undefined && !this.lock.heldLately());
  }

  /** Appends `ops` to the journal as one line and returns its bytes; on a failure `undo` puts the records back and this throws StoreUnavailable. */
  private append(ops: JournalOp[], undo: () => void): number {
    let bytes = 0;
    try {
      this.line.add(JSON.stringify(ops));
      this.line.add('\n');
      bytes = this.line.length;
      this.journal!.append(this.line.take());
    } catch (error) {
      this.failed(error, bytes, undo);
    }
    return bytes;
  }

  /** After a line of `bytes` was written, nothing pending: a failure it ends, a checkpoint it calls for. */
  private written(bytes: number): void {
    this.failures.wrote(bytes);
    if (this.shouldCheckpoint()) void this.checkpoint();
  }

  /** A line that could not be written: the records put back, the failure noted and thrown as StoreUnavailable. */
  private failed(error: unknown, bytes: number, undo: () => void): never {
    // A line not finished must not begin the next one.
    this.line.clear();
    undo();
    throw this.failures.failed(error, bytes);
  }

  protected override checkpointed(): void {
    this.failures.checkpointed();
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
    this.failures.failure = { code: LOCK_LOST, error: error.message, since: Date.now() };
    this.options.onError?.(error);
  }
}
