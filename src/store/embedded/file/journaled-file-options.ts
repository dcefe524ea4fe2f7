import type { LockTiming } from './heartbeat.js';
import type { StartNotices } from './recovery.js';
import type { RecordFormats, StoreFileSystem } from './types.js';

/** How a journaled file is opened and kept (see JournaledFile.open); `Store` is the journaled file `onLoad` is given. */
export interface JournaledFileOptions<Store = unknown> extends StartNotices {
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
  onLoad?: (store: Store) => void;
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
