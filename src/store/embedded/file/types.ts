import { RecordMap } from './record-map.js';

/** A collection of records keyed by id, as it stands in the data file. */
export type Collection = Record<string, unknown>;

/**
 * A collection as the store keeps it in memory: a RecordMap. A big plain object is a
 * dictionary whose every growth rehashes it in one go, and whose keys a checkpoint must
 * list in order (`Object.keys` sorts them); a Map lists its keys in insertion order
 * cheaply, but also grows in one go; a RecordMap lists them cheaply and grows in small
 * steps (see RecordMap).
 */
export type Records = RecordMap<unknown>;

/** The whole store as the data file holds it (collections read from the data file come as RecordMaps). */
export interface JournaledFileData {
  schema_version: number;
  /** Journal files with this generation or later hold changes newer than this file. */
  journal_generation: number;
  [collection: string]: Collection | Records | number;
}

/** A collection's record, whichever form the collection has. */
export const recordOf = (records: Collection | Records, key: string): unknown => (records instanceof RecordMap ? records.get(key) : records[key]);

/**
 * How the records of one collection are written to the data file and read back, when
 * shorter than their JSON as the API shows them (schema version 4 on; see
 * `OrderFileFormat`). Both ends keep the record exactly: `read(write(r))` is `r`.
 */
export interface RecordFormat {
  /** A writer for one write of the file: the value to write for each record, called in the order the records are written. */
  writer(): (key: string, value: unknown) => unknown;
  /** The record a value read from the file stands for; `earlier(key)` is a record of the collection read before it, as kept. */
  read(key: string, value: unknown, earlier: (key: string) => unknown): unknown;
}

/** Formats by collection name; a collection without one is written as its records' JSON. */
export type RecordFormats = Readonly<Record<string, RecordFormat>>;

/** The first schema version whose files may hold records in their collection's `RecordFormat`. */
export const FORMATS_SINCE = 4;

/**
 * lowdb's adapter: the whole contract of a storage back end (`read()`, `write(data)`).
 * Here `write` is only used for checkpoints; every change between them goes to the journal.
 */
export type { Adapter } from 'lowdb';

/**
 * One change in a journal line: `v` puts a whole record, `d` deletes it, `p` sets the
 * fields it names on the record as it stands (a record changed in a few fields, such as
 * an order getting its AWB, is journaled as those fields only). Replaying one twice is
 * harmless.
 */
export interface JournalOp {
  c: string;
  k: string;
  v?: unknown;
  d?: 1;
  p?: Record<string, unknown>;
}

export class DataFileError extends Error {
  override name = 'DataFileError';
}

/**
 * A journal write failed (ENOSPC, EIO, EROFS, ...): the commit's changes were rolled
 * back and nothing was acknowledged. Answer 503 with Retry-After; a later commit
 * succeeds once the disk takes writes again.
 *
 * @example
 * try { store.commit(); } catch (error) { if (error instanceof StoreUnavailable) return reply503(error.code); throw error; }
 */
export class StoreUnavailable extends Error {
  override name = 'StoreUnavailable';
  constructor(
    /** The errno code, e.g. `ENOSPC`; `EUNKNOWN` when the error had none. */
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(`The data file cannot be written (${code}): the change was not saved. Try again later.`, options);
  }
}

/** What `JournaledFile.health()` reports. */
export interface JournaledFileHealth {
  /** False from a failed journal append until one succeeds (out of space: one as long as the shortest that failed). */
  writable: boolean;
  /** While not writable: the errno code of the failure that started it, e.g. `ENOSPC`. */
  code?: string;
  /** While not writable: that failure's message, code first. */
  error?: string;
  /** While not writable: when it started failing (epoch ms of the wall clock). */
  since?: number;
  /** Set while checkpoints fail (the journal still holds every change; the data file lags): the error. */
  checkpointError?: string;
}

/**
 * The file operations through which the store writes data: the seam where tests inject
 * ENOSPC or EIO. Defaults to node:fs. Writes may write fewer bytes than asked, as write(2) does.
 */
export interface StoreFileSystem {
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
  write(fd: number, buffer: Uint8Array, offset: number, length: number): Promise<number>;
  fsyncSync(fd: number): void;
  fsync(fd: number): Promise<void>;
  ftruncateSync(fd: number, length: number): void;
}
