import { existsSync } from 'node:fs';
import { dataFilePath } from './data-path.js';
import { restrictDataFiles } from './private-files.js';
import { RecordMap } from './record-map.js';
import { copyWith } from './record-copy.js';
import { Low, Memory } from 'lowdb';
import { describeError, errnoOf, nodeFileSystem, Utf8Chunk } from './files.js';
import { Journal } from './journal.js';
import type { LockTiming } from './heartbeat.js';
import { DataFileLock, type LockLoss } from './lock.js';
import type { LockHolder } from './lock-holder.js';
import { checkVersion, emptyData, migrate, SCHEMA_VERSION } from './schema.js';
import { checkData } from './schema-check.js';
import { CheckpointAborted, SnapshotFile, type SnapshotChunk } from './snapshot-file.js';
import { DataFileError, StoreUnavailable, type Collection, type JournalOp, type RecordFormats, type Records, type JournaledFileData, type StoreFileSystem, type JournaledFileHealth } from './types.js';

const MiB = 2 ** 20;

/** The code of `StoreUnavailable` (and of the store's health) once another sandbox took the data file's lock. */
export const LOCK_LOST = 'ELOCKLOST';

const lockTakenMessage = (path: string, by: LockHolder | undefined, why: LockLoss): string =>
  (why === 'taken' && by
    ? `Another sandbox took the lock of the data file ${path} (pid ${by.pid} on host ${by.host}, since ${by.since}) while this one was not refreshing it`
    : why === 'unrefreshed'
      ? `The lock of the data file ${path} could not be refreshed for seconds, so another sandbox may take it over`
      : why === 'unreadable'
        ? `The lock of the data file ${path} could not be read for seconds`
        : `The lock of the data file ${path} was removed`) +
  ': this sandbox writes nothing more to the data file, and every change answers 503. Stop it; if another sandbox serves the data file now, leave that one running, else start this one again.';

export interface JournaledFileOptions {
  /** A file path, or `:memory:` to keep nothing (and take no lock). */
  path: string;
  /** fsync every journal append (survives power loss, not only a crash of the process). */
  fsync?: boolean;
  /**
   * Checkpoint (rewrite the data file) once the journal holds this many bytes, or as
   * many as the data file if that is more, so the cost of checkpoints stays
   * proportional to the changes whatever the size of the store. Default 64 MiB
   * (replayed at start in about half a second).
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
   * Called once the records are read, the journal replayed and the whole migrated, before
   * anything is written (the migrated file, a new file, a journal segment): the owner
   * builds what it keeps of them (indexes). Throwing refuses the start, leaving the files
   * as they were and no lock.
   */
  onLoad?: (store: JournaledFile) => void;
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
 * @example
 * const store = await JournaledFile.open({ path: ':memory:' });
 * store.put('orders', '1', { order_no: '1' });
 * store.commit();
 */
export class JournaledFile {
  /** Changed records since the last commit: the value each had before and has now, as kept (undefined: none). */
  private readonly pending = new Map<string, { op: JournalOp; before: unknown; after: unknown }>();
  private checkpointing: Promise<void> | undefined;
  private nextCheckpoint: Promise<void> | undefined;
  private checkpointRetryAt = 0;
  private closing = false;
  private closed = false;
  /** Set by close(): a checkpoint in progress stops at its next chunk. */
  private stopCheckpoint = false;
  private failure: { code: string; error: string; since: number } | undefined;
  /** Set when another sandbox took the lock: nothing is written any more. */
  private lockLost = false;
  /** Whom the lock named when it was found lost (undefined: no one, or unreadable). */
  private lostTo: LockHolder | undefined;
  private lostWhy: LockLoss = 'taken';
  private checkpointError: string | undefined;
  /** The journal line being written, encoded into one reused buffer (the append is synchronous). */
  private readonly line = new Utf8Chunk();

  private constructor(
    private readonly db: Low<JournaledFileData>,
    private readonly journal: Journal | undefined,
    private readonly lock: DataFileLock | undefined,
    private readonly options: JournaledFileOptions,
  ) {}

  /**
   * Opens the store on the data file `path` names, symbolic links followed (see
   * `dataFilePath`): takes the data file's lock (throws DataFileLocked, touching no file,
   * when another live sandbox holds it), removes temp files of an interrupted
   * checkpoint, reads the data file and replays the journal, both as streams.
   */
  static async open(options: JournaledFileOptions): Promise<JournaledFile> {
    if (options.path === ':memory:') {
      const db = new Low<JournaledFileData>(new Memory<JournaledFileData>(), emptyData());
      const store = new JournaledFile(db, undefined, undefined, options);
      options.onLoad?.(store);
      return store;
    }
    const path = dataFilePath(options.path);
    const lock = DataFileLock.acquire(path, undefined, options.lockTiming);
    // The lock is refreshed from now on; taken meanwhile, it fences the store (or refuses the start, before the first write).
    let opened: JournaledFile | undefined;
    let takenWhileOpening: { by: LockHolder | undefined; why: LockLoss } | undefined;
    lock.watch(
      (by, why) => {
        if (opened) opened.lockTaken(by, why);
        else takenWhileOpening = { by, why };
      },
      (error) =>
        options.onError?.(
          new DataFileError(`The lock of the data file ${path} cannot be refreshed on this file system (${describeError(error)}): a sandbox in another container given the same hostname would not see this one live. Keep one sandbox per data file by hand there.`),
        ),
    );
    let journal: Journal | undefined;
    try {
      restrictDataFiles(path);
      const file = new SnapshotFile(path, options.fileSystem, options.pack, options.formats);
      file.removeLeftovers();
      const db = new Low<JournaledFileData>(file, emptyData());
      const fresh = !existsSync(path);
      await db.read();
      const fromVersion = checkVersion(db.data, path);
      // Version 0 (lowdb's file) has other shapes: it is checked once migrated.
      if (fromVersion >= 1) checkData(db.data, path);
      db.data.journal_generation ??= 0;
      journal = new Journal(path, db.data.journal_generation, {
        fsync: options.fsync ?? false,
        segmentBytes: options.segmentBytes ?? 64 * MiB,
        fs: options.fileSystem ?? nodeFileSystem,
      });
      const store = new JournaledFile(db, journal, lock, options);
      // The journal holds changes in the file's own schema: replay them, then migrate the whole.
      await journal.replay(db.data.journal_generation, (op) => store.apply(op));
      // Migrations work on the file's plain objects; the store turns them back into RecordMaps as it uses them.
      // Version 2 on changes no record: its collections stay RecordMaps.
      if (fromVersion < 2) asObjects(db.data);
      db.data = migrate(db.data, path);
      if (fromVersion === 0) checkData(db.data, path);
      // Before the first write: an owner that cannot build on these records refuses the start with the files as they were.
      options.onLoad?.(store);
      // Nothing is written before this point: a sandbox that lost its lock while it loaded leaves the files to the new holder.
      if (!lock.held() || takenWhileOpening) throw new DataFileError(lockTakenMessage(path, takenWhileOpening?.by, takenWhileOpening?.why ?? 'taken'));
      opened = store;
      journal.open();
      // A migrated store is written out at once, so no journal of the old schema is replayed
      // again. If that cannot be written, changes in the new schema must not follow the old
      // journal: refuse to start, leaving the old file and journal as they were.
      if (fromVersion < SCHEMA_VERSION) {
        await store.checkpoint();
        const failed = store.health().checkpointError;
        if (failed !== undefined) {
          throw new DataFileError(`Cannot write the data file ${path} migrated to schema version ${SCHEMA_VERSION} (${failed}). It was left as it was; free some space and start again.`);
        }
      } else if (fresh) {
        // A new store writes its data file at once, so the journal never stands alone: the
        // file's schema version is what an older sandbox checks before it reads the journal.
        await store.checkpoint();
        const failed = store.health().checkpointError;
        if (failed !== undefined) {
          throw new DataFileError(`Cannot write the new data file ${path} (${failed}); free some space and start again.`);
        }
      }
      // Lost during the start's checkpoint (which then stopped): refuse the start rather than serve fenced.
      if (store.lockLost) throw new DataFileError(lockTakenMessage(path, store.lostTo, store.lostWhy));
      return store;
    } catch (error) {
      // A refused start leaves the files as they were: no segment it opened empty, no lock.
      // With the lock lost, the files are another sandbox's now: not one is touched.
      if (!takenWhileOpening && !opened?.lockLost) journal?.abandon();
      lock.release();
      throw error;
    }
  }

  get isPersistent(): boolean {
    return this.journal !== undefined;
  }

  /**
   * Whether commits can be saved. Not writable from a failed journal append until the
   * next one that succeeds; `checkpointError` while checkpoints fail.
   */
  health(): JournaledFileHealth {
    return {
      writable: this.failure === undefined,
      ...(this.failure ?? {}),
      ...(this.checkpointError !== undefined ? { checkpointError: this.checkpointError } : {}),
    };
  }

  get<T>(collection: string, key: string): T | undefined {
    return this.collection(collection).get(key) as T | undefined;
  }

  /** Every record of a collection, in the order they were first put. */
  values<T>(collection: string): T[] {
    return this.collection(collection).valueList() as T[];
  }

  /** Every record of a collection with its key, in the order they were first put. */
  entries<T>(collection: string): Array<[string, T]> {
    return [...this.collection(collection).entries()] as Array<[string, T]>;
  }

  count(collection: string): number {
    return this.collection(collection).size;
  }

  /**
   * Sets a record; saved by the next `commit()`. Put a new object rather than one
   * changed in place: a failed commit restores the value the collection held before,
   * which an object changed in place no longer is. Returns the record it replaces, as kept
   * (undefined: none).
   */
  put<T>(collection: string, key: string, value: T): unknown {
    const records = this.collection(collection);
    const after = this.options.pack ? this.options.pack(collection, value, records.get(key)) : value;
    const current = this.track({ c: collection, k: key }, records, after);
    records.set(key, after);
    return current;
  }

  /** Removes a record; saved by the next `commit()`. Returns the record removed, as kept (undefined: none). */
  delete(collection: string, key: string): unknown {
    const records = this.collection(collection);
    const current = this.track({ c: collection, k: key, d: 1 }, records, undefined);
    records.delete(key);
    return current;
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
    if (this.closed || this.lockLost || (this.lock !== undefined && !this.lock.heldLately())) {
      this.rollBack();
      throw new StoreUnavailable(this.lockLost ? LOCK_LOST : 'ECLOSED');
    }
    try {
      const ops: JournalOp[] = [];
      for (const { op, before, after } of this.pending.values()) {
        if (after === undefined) {
          ops.push({ c: op.c, k: op.k, d: 1 });
          continue;
        }
        const patch = patchOf(before, after);
        ops.push(patch === undefined ? { c: op.c, k: op.k, v: after } : { c: op.c, k: op.k, p: patch });
      }
      this.line.add(JSON.stringify(ops));
      this.line.add('\n');
      this.journal.append(this.line.take());
    } catch (error) {
      // A line not finished must not begin the next one.
      this.line.clear();
      this.rollBack();
      const code = errnoOf(error);
      this.failure ??= { code, error: describeError(error), since: Date.now() };
      this.options.onWriteFailed?.(error as Error);
      throw new StoreUnavailable(code, { cause: error });
    }
    this.pending.clear();
    if (this.failure !== undefined) {
      this.failure = undefined;
      this.options.onWriteResumed?.();
    }
    if (this.shouldCheckpoint()) void this.checkpoint();
  }

  /**
   * Rewrites the data file from memory and drops the journal segments it now holds;
   * resolves once the file holds every change committed before the call. A
   * failure leaves the old data file and the journal as they were; it is reported to
   * `onError` and in `health()`, and the next automatic checkpoint waits `checkpointRetryMs`.
   */
  checkpoint(): Promise<void> {
    const journal = this.journal;
    if (!journal || this.closed || this.lockLost) return Promise.resolve();
    if (this.checkpointing) {
      // One is running and may have passed records committed since: run one more after it.
      this.nextCheckpoint ??= this.checkpointing.then(() => {
        this.nextCheckpoint = undefined;
        return this.checkpoint();
      });
      return this.nextCheckpoint;
    }
    this.checkpointing = this.writeCheckpoint(journal).finally(() => {
      this.checkpointing = undefined;
    });
    return this.checkpointing;
  }

  /**
   * Commits, makes the journal durable (fsync) and releases the lock. Rewrites the data
   * file only when that is cheap (`closeCheckpointBytes`); a checkpoint running in the
   * background is stopped, so closing takes about as long whatever the store's size.
   * Safe to call twice.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    try {
      this.commitReporting();
      this.stopCheckpoint = true;
      await this.checkpointing;
      this.stopCheckpoint = false;
      if (this.journal && !this.lockLost && this.dataBytes() <= (this.options.closeCheckpointBytes ?? 32 * MiB) && this.journal.bytesSinceCheckpoint > 0) {
        await this.checkpoint();
      }
      this.journal?.flush();
    } finally {
      this.closed = true;
      this.journal?.close();
      this.lock?.release();
    }
  }

  /**
   * Another sandbox took the data file's lock (this one stalled longer than the lock's
   * staleness, or its lock file was removed by hand): from now on this store writes
   * nothing to the data file's files. A checkpoint running stops at its next chunk, every
   * commit fails as a failed write does (503), health shows the store degraded, and the
   * error is logged once.
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

  private shouldCheckpoint(): boolean {
    const journal = this.journal!;
    if (this.checkpointing || this.closing || Date.now() < this.checkpointRetryAt) return false;
    return journal.bytesSinceCheckpoint >= Math.max(this.options.checkpointBytes ?? 64 * MiB, this.file()?.bytes ?? 0);
  }

  private async writeCheckpoint(journal: Journal): Promise<void> {
    try {
      this.commit();
      const generation = journal.rotate();
      const data = { ...this.db.data, journal_generation: generation };
      await this.file()!.writeFrom(data, {
        chunksOf: (_name, records) => (records instanceof RecordMap ? this.committedChunks(records) : [{ keys: Object.keys(records) }]),
        valueOf: (name, key) => this.committedValue(name, key),
        aborted: () => this.stopCheckpoint || this.lockLost,
        // Read from the lock file itself: a loss the next beat would find must not let this file replace the new holder's.
        mayReplace: () => !this.lockLost && (this.lock?.held() ?? true),
      });
      this.db.data.journal_generation = generation;
      if (this.lock !== undefined && !this.lock.held()) return;
      await journal.removeBefore(generation);
      this.checkpointError = undefined;
    } catch (error) {
      if (error instanceof CheckpointAborted) return;
      this.checkpointError = describeError(error);
      this.checkpointRetryAt = Date.now() + (this.options.checkpointRetryMs ?? 30_000);
      this.options.onError?.(error as Error);
    }
  }

  /**
   * A collection's chunks as a checkpoint takes them: each taken when its turn comes, with
   * its records when no change is pending then (every record there is committed), else
   * with its keys only, each record then looked up as last committed.
   */
  private *committedChunks(records: RecordMap<unknown>): Generator<SnapshotChunk> {
    for (const chunk of records.entryChunks()) yield this.pending.size === 0 ? chunk : { keys: chunk.keys };
  }

  /** The value of a record as last committed: a pending change shows its value from before. */
  private committedValue(name: string, key: string): unknown {
    const pending = this.pending.get(`${name}\u0000${key}`);
    return pending ? pending.before : this.collection(name).get(key);
  }

  private rollBack(): void {
    for (const { op, before } of this.pending.values()) {
      const records = this.collection(op.c);
      if (before === undefined) records.delete(op.k);
      else records.set(op.k, before);
    }
    this.pending.clear();
  }

  private apply(op: JournalOp): void {
    const records = this.collection(op.c);
    if (op.d) {
      records.delete(op.k);
      return;
    }
    const current = records.get(op.k);
    let value = op.v;
    if (op.p !== undefined) {
      // A record a fuzzy checkpoint saw deleted: an op later in the journal (its delete, or a put) sets what it became.
      if (typeof current !== 'object' || current === null) return;
      // Every field in the object itself, as the store's other copies (see copyWith).
      value = copyWith(current, op.p);
    }
    records.set(op.k, this.options.pack ? this.options.pack(op.c, value, current) : value);
  }

  /** Notes a change to `records` (the collection `op.c`) before it is made; returns the record it replaces. */
  private track(op: JournalOp, records: Records, after: unknown): unknown {
    const id = `${op.c}\u0000${op.k}`;
    const known = this.pending.get(id);
    const current = records.get(op.k);
    this.pending.set(id, { op, before: known ? known.before : current, after });
    if (this.pending.size === 1 && !known) queueMicrotask(() => this.commitReporting());
    return current;
  }

  /** A commit no caller waits on (the microtask after a put, close): a failure goes to onError. */
  private commitReporting(): void {
    try {
      this.commit();
    } catch (error) {
      this.options.onError?.(error as Error);
    }
  }

  private file(): SnapshotFile | undefined {
    return this.db.adapter instanceof SnapshotFile ? this.db.adapter : undefined;
  }

  private dataBytes(): number {
    return (this.file()?.bytes ?? 0) + (this.journal?.bytesSinceCheckpoint ?? 0);
  }

  /** A collection as a RecordMap: one still a plain object (a new store, an older file's, a migrated one) becomes one. */
  private collection(name: string): Records {
    const existing = this.db.data[name];
    if (existing instanceof RecordMap) return existing;
    const records: Records = new RecordMap(typeof existing === 'object' ? Object.entries(existing) : []);
    this.db.data[name] = records;
    return records;
  }
}

/**
 * The fields of `after` that are not those of `before`, when the journal may carry a
 * record's change as them: both are records frozen whole (so a field that is the same
 * value or object in both has the same JSON), and `after` has every field of `before`, in
 * the same order, new ones after them (so `{...before, ...patch}` at replay has the same
 * JSON as `after`, key order included). Otherwise undefined: the whole record is journaled.
 * An order that gets its AWB is then ~200 bytes in the journal rather than ~1 KB with its
 * sender and item.
 */
export function patchOf(before: unknown, after: unknown): Record<string, unknown> | undefined {
  if (typeof before !== 'object' || before === null || typeof after !== 'object' || after === null) return undefined;
  if (Array.isArray(before) || Array.isArray(after) || !Object.isFrozen(before) || !Object.isFrozen(after)) return undefined;
  // Plain records only: an instance may have a toJSON of its own, or state a freeze does not cover (a Date).
  if (!isPlain(before) || !isPlain(after)) return undefined;
  const was = before as Record<string, unknown>;
  const now = after as Record<string, unknown>;
  const keys = Object.keys(was);
  const patch: Record<string, unknown> = {};
  let i = 0;
  for (const key in now) {
    if (!Object.hasOwn(now, key)) return undefined;
    const value = now[key];
    if (i < keys.length) {
      if (keys[i] !== key) return undefined;
      i += 1;
      if (value === was[key]) continue;
      // A field that is undefined is not in the JSON: one that comes or goes would move or stay at replay.
      if (value === undefined || was[key] === undefined) return undefined;
    } else if (value === undefined) continue;
    // Assigning "__proto__" would set the patch's prototype rather than a field.
    if (key === '__proto__') return undefined;
    patch[key] = value;
  }
  return i === keys.length ? patch : undefined;
}

const isPlain = (value: object): boolean => {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
};

/** Turns the RecordMap collections of `data` into plain objects, as migrations expect them. */
function asObjects(data: JournaledFileData): void {
  for (const [name, records] of Object.entries(data)) {
    if (records instanceof RecordMap) data[name] = Object.fromEntries(records) as Collection;
  }
}
