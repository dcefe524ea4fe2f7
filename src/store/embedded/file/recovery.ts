import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { Low } from 'lowdb';
import { describeError, nodeFileSystem, remedyFor } from './files.js';
import { Journal, type JournalSalvage, type JournalTornTail } from './journal.js';
import type { DataFileLock } from './lock.js';
import type { LockHolder } from './lock-holder.js';
import { restrictDataFiles } from './private-files.js';
import { RecordMap } from './record-map.js';
import { checkData } from './schema-check.js';
import { checkVersion, emptyData, migrate, SCHEMA_VERSION } from './schema.js';
import { SnapshotFile } from './snapshot-file.js';
import { DataFileError, type Collection, type JournaledFileData, type JournaledFileHealth, type RecordFormats, type StoreFileSystem } from './types.js';

// The steps of a journaled file's start, before it serves: read the data file, open its
// journal, migrate what was read and replayed, write the file at once when it is new or
// was migrated. `JournaledFile.open` runs them in order, with the lock held.

const MiB = 2 ** 20;

/** What reading the data file takes of the journaled file's options. */
interface ReadOptions {
  fileSystem?: StoreFileSystem;
  pack?: (collection: string, value: unknown, current?: unknown) => unknown;
  formats?: RecordFormats;
}

/** The data file as read at the start: its records, whether it was new, and the schema version it was written in. */
export interface ReadFile {
  db: Low<JournaledFileData>;
  /** The data file's writer; `removeLeftovers()` once the start is accepted. */
  snapshot: SnapshotFile;
  fresh: boolean;
  fromVersion: number;
}

/**
 * Reads the data file, made private to this user, as a stream, and checks its schema
 * version and, from version 1 on, its records. A new data file reads as empty. Temp files
 * of an interrupted checkpoint are left for the caller to remove once the start is
 * accepted: a refused start leaves them, as they may be the newest copy someone repairing
 * by hand wants.
 */
export async function readDataFile(path: string, options: ReadOptions): Promise<ReadFile> {
  restrictDataFiles(path);
  const file = new SnapshotFile(path, options.fileSystem, options.pack, options.formats);
  const db = new Low<JournaledFileData>(file, emptyData());
  const fresh = !existsSync(path);
  await db.read();
  const fromVersion = checkVersion(db.data, path);
  // Version 0 (lowdb's file) has other shapes: it is checked once migrated.
  if (fromVersion >= 1) checkData(db.data, path);
  db.data.journal_generation ??= 0;
  return { db, snapshot: file, fresh, fromVersion };
}

/** The data file's journal, from the generation the file names on. */
export function journalOf(path: string, data: JournaledFileData, options: { fsync?: boolean; segmentBytes?: number; fileSystem?: StoreFileSystem }): Journal {
  return new Journal(path, data.journal_generation, {
    fsync: options.fsync ?? false,
    segmentBytes: options.segmentBytes ?? 64 * MiB,
    fs: options.fileSystem ?? nodeFileSystem,
  });
}

/**
 * Migrates the records read and replayed to this sandbox's schema. Migrations work on the
 * file's plain objects; the journaled file turns them back into RecordMaps as it uses
 * them. Version 2 on changes no record: its collections stay RecordMaps.
 */
export function migrateLoaded(db: Low<JournaledFileData>, fromVersion: number, path: string): void {
  if (fromVersion < 2) asObjects(db.data);
  db.data = migrate(db.data, path);
  if (fromVersion === 0) checkData(db.data, path);
}

/** Turns the RecordMap collections of `data` into plain objects, as migrations expect them. */
function asObjects(data: JournaledFileData): void {
  for (const [name, records] of Object.entries(data)) {
    if (records instanceof RecordMap) data[name] = Object.fromEntries(records) as Collection;
  }
}

/** What a start tells its owner about the files it found, for the log lines no caller makes. */
export interface StartNotices {
  /** Told what a salvage (see `salvageJournal`) set aside. */
  onSalvage?: (salvage: JournalSalvage) => void;
  /**
   * Told that the newest journal segment ended in a line cut short, dropped: a write a crash
   * or a full disk cut off, never acknowledged; many bytes of it may be a file cut by other means.
   */
  onTornTail?: (torn: JournalTornTail) => void;
  /** Told that the data file was of an older schema version and is now written at this one: a sandbox of that version cannot use it from now on. */
  onMigrated?: (fromVersion: number, toVersion: number) => void;
  /** Told that the data file's lock was stale (its sandbox killed, or the machine restarted) and was taken over: whose it was. */
  onLockTakenOver?: (holder: LockHolder) => void;
}

/** What the start's first write uses of the journaled file. */
interface Checkpointed {
  checkpoint(atStart: boolean): Promise<void>;
  health(): JournaledFileHealth;
}

/**
 * Writes the data file at once when it was migrated or is new, or refuses the start.
 *
 * A migrated file is written out at once, so no journal of the old schema is replayed
 * again. If that cannot be written, changes in the new schema must not follow the old
 * journal: the start is refused, leaving the old file and journal as they were.
 *
 * A new file is written at once, so the journal never stands alone: the file's schema
 * version is what an older sandbox checks before it reads the journal.
 */
export async function writeAtStart(file: Checkpointed, path: string, fromVersion: number, fresh: boolean, notices: StartNotices = {}): Promise<void> {
  if (fromVersion < SCHEMA_VERSION) {
    await file.checkpoint(true);
    const failed = file.health().checkpointError;
    if (failed !== undefined) {
      throw new DataFileError(`Cannot write the data file ${path} migrated to schema version ${SCHEMA_VERSION} (${failed}). It was left as it was. ${remedyFor(failed, dirname(path))}`);
    }
    notices.onMigrated?.(fromVersion, SCHEMA_VERSION);
  } else if (fresh) {
    await file.checkpoint(true);
    const failed = file.health().checkpointError;
    if (failed !== undefined) {
      throw new DataFileError(`Cannot write the new data file ${path} (${failed}). ${remedyFor(failed, dirname(path))}`);
    }
  }
}

/**
 * Ends a refused start that had taken the lock: the journal abandoned (cut back to where the
 * start found it, the segments it created empty removed), unless `theirs` (the lock was taken
 * meanwhile, so the files are another sandbox's: not one is touched); then the lock given back.
 */
export function refuse(journal: Journal | undefined, lock: DataFileLock, theirs: boolean): void {
  if (theirs) journal?.close();
  else journal?.abandon();
  try {
    lock.release();
  } catch {
    // The start's own error is the one to tell; a lock left behind is taken over as stale.
  }
}

/** A start refused as a journal append failed (a start-time write, such as the clock's, on a disk all but full): the segment named. */
export const cannotWriteJournal = (segment: string, failed: string, cause: unknown): DataFileError =>
  new DataFileError(`Cannot write the journal ${segment} (${failed}) as the sandbox started; nothing was left behind. ${remedyFor(failed, dirname(segment))}`, { cause });

/** The error told to onError when the lock cannot be refreshed on this file system at all. */
export const unrefreshableLock = (path: string, error: unknown): DataFileError =>
  new DataFileError(
    `The lock of the data file ${path} cannot be refreshed on this file system (${describeError(error)}): a sandbox in another container given the same hostname would not see this one live. Keep one sandbox per data file by hand there.`,
  );
